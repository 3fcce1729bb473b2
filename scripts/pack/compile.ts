// Compiles the TypeScript the published packages ship to JavaScript with declarations, in one tsc
// program (the repository's compiler options, emitting): dist/pack/out mirrors the repository.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { repoRoot } from "./workspace.ts";

const compiledRoot = path.join(repoRoot, "dist", "pack", "out");

/** Compiles the given repository-relative .ts files (and nothing else); throws with tsc's output. */
export function compile(sources: string[]): void {
  const configDir = path.join(repoRoot, "dist", "pack");
  fs.rmSync(compiledRoot, { recursive: true, force: true });
  fs.mkdirSync(configDir, { recursive: true });
  const config = {
    extends: "../../tsconfig.json",
    compilerOptions: {
      noEmit: false,
      declaration: true,
      rewriteRelativeImportExtensions: true,
      allowImportingTsExtensions: false,
      rootDir: "../..",
      outDir: "out",
    },
    include: [],
    files: sources.map((file) => `../../${file}`),
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
    if (!fs.existsSync(compiledFile(file, ".js"))) throw new Error(`tsc emitted nothing for ${file}`);
  }
}

/** Where the compiled form (`.js` or `.d.ts`) of a repository-relative .ts file is. */
export function compiledFile(source: string, extension: ".js" | ".d.ts"): string {
  return path.join(compiledRoot, source.replace(/\.ts$/, extension));
}
