// Compiles TypeScript to JavaScript in one tsc program (the repository's compiler options,
// emitting): <work dir>/out mirrors the repository. The published packages ship it with
// declarations (work dir dist/pack); the container image ships it instead of the sources.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { repoRoot } from "./workspace.ts";

const packWorkDir = path.join(repoRoot, "dist", "pack");

export interface CompileOptions {
  /** Where tsconfig.json and out/ go (default dist/pack). */
  workDir?: string;
  /** Emit .d.ts files too (default true: the published packages ship them). */
  declaration?: boolean;
}

/** The JavaScript file a source file compiles to (`src/a.ts` → `src/a.js`); a `.d.ts` keeps its name. */
export const compiledName = (file: string) => file.replace(/(?<!\.d)\.ts$/, ".js");

/** Compiles the given repository-relative .ts files (and nothing else); throws with tsc's output. */
export function compile(sources: string[], options: CompileOptions = {}): void {
  const configDir = options.workDir ?? packWorkDir;
  const toRepo = path.relative(configDir, repoRoot).split(path.sep).join("/");
  fs.rmSync(path.join(configDir, "out"), { recursive: true, force: true });
  fs.mkdirSync(configDir, { recursive: true });
  const config = {
    extends: `${toRepo}/tsconfig.json`,
    compilerOptions: {
      noEmit: false,
      declaration: options.declaration ?? true,
      rewriteRelativeImportExtensions: true,
      allowImportingTsExtensions: false,
      rootDir: toRepo,
      outDir: "out",
      // Type libraries are looked up from the config's directory, which may be outside the repository.
      typeRoots: [`${toRepo}/node_modules/@types`],
    },
    include: [],
    files: sources.map((file) => `${toRepo}/${file}`),
  };
  const tsconfig = path.join(configDir, "tsconfig.json");
  fs.writeFileSync(tsconfig, `${JSON.stringify(config, null, 2)}\n`);
  const tsc = path.join(
    path.dirname(createRequire(import.meta.url).resolve("typescript/package.json")),
    "bin",
    "tsc",
  );
  const result = spawnSync(process.execPath, [tsc, "-p", tsconfig, "--pretty", "false"], {
    cwd: repoRoot,
    encoding: "utf8",
  });
  if (result.status !== 0) {
    throw new Error(`tsc could not compile the packages:\n${result.stdout}${result.stderr}`);
  }
  for (const file of sources) {
    if (!fs.existsSync(compiledFile(file, ".js", configDir)))
      throw new Error(`tsc emitted nothing for ${file}`);
  }
}

/** Where the compiled form (`.js` or `.d.ts`) of a repository-relative .ts file is. */
export function compiledFile(source: string, extension: ".js" | ".d.ts", workDir = packWorkDir): string {
  return path.join(workDir, "out", source.replace(/\.ts$/, extension));
}
