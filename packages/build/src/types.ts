// The type files of @sdk/device (and the parts of @sdk/protocol they name), copied into a project's
// `.sdk/types/` so that an editor and `tsc` resolve `@sdk/device` with nothing installed in the project.
// From an installed CLI they are the compiled declarations (*.d.ts); from this repository, the sources.
import fs from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** Where the types live, relative to the project directory. Laid out as a node_modules tree. */
const typesDir = ".sdk/types";
const deviceDir = `${typesDir}/node_modules/@sdk/device`;

const deviceRoot = path.dirname(path.dirname(fileURLToPath(import.meta.resolve("@sdk/device"))));
const protocolRoot = path.dirname(path.dirname(fileURLToPath(import.meta.resolve("@sdk/protocol/hardware"))));
/** Compiled packages carry declarations next to the JavaScript; the repository has only sources. */
const fromSources = fileURLToPath(import.meta.resolve("@sdk/device")).endsWith(".ts");
const isTypeFile = (name: string) => (fromSources ? name.endsWith(".ts") : name.endsWith(".d.ts"));

/**
 * How device scripts are type-checked: standard JavaScript only (no DOM, no Node types); the sandbox's
 * few globals come from @sdk/device's globals.d.ts.
 */
const scriptCompilerOptions = {
  target: "es2023",
  module: "esnext",
  moduleResolution: "bundler",
  lib: ["es2023"],
  types: [],
  strict: true,
  noImplicitAny: false,
  noEmit: true,
  skipLibCheck: true,
  // From a repository checkout the copied library is TypeScript source importing "./x.ts".
  allowImportingTsExtensions: true,
} as const;

/** The compiler options and files for a tsconfig in `dir` (relative to the project directory). */
export function scriptTsconfig(dir = ".") {
  const rel = (p: string) => {
    const r = path.posix.relative(dir, p);
    return r.startsWith("../") ? r : `./${r}`;
  };
  return {
    compilerOptions: {
      ...scriptCompilerOptions,
      paths: { "@sdk/device": [rel(`${deviceDir}/src/index`)] },
    },
    globals: rel(`${deviceDir}/globals.d.ts`),
  };
}

/** The tsconfig.json `sdk init` writes: what an editor sees, the same as `sdk build` checks. */
export function projectTsconfig() {
  const { compilerOptions, globals } = scriptTsconfig();
  return { compilerOptions, include: ["src", "sdk.ts", globals.replace(/^\.\//, "")] };
}

async function collect(root: string, rel: string, into: Map<string, Buffer>, prefix: string) {
  const entries = await fs.readdir(path.join(root, rel), { withFileTypes: true }).catch(() => []);
  for (const entry of entries) {
    const file = path.posix.join(rel, entry.name);
    if (entry.isDirectory()) await collect(root, file, into, prefix);
    else if (isTypeFile(entry.name)) into.set(`${prefix}/${file}`, await fs.readFile(path.join(root, file)));
  }
}

async function wanted(): Promise<Map<string, Buffer>> {
  const files = new Map<string, Buffer>();
  for (const [root, dir] of [
    [deviceRoot, deviceDir],
    [protocolRoot, `${typesDir}/node_modules/@sdk/protocol`],
  ] as const) {
    files.set(`${dir}/package.json`, await fs.readFile(path.join(root, "package.json")));
    await collect(root, "src", files, dir);
  }
  files.set(`${deviceDir}/globals.d.ts`, await fs.readFile(path.join(deviceRoot, "globals.d.ts")));
  return files;
}

async function existing(projectDir: string, rel: string, into: Set<string>) {
  const entries = await fs.readdir(path.join(projectDir, rel), { withFileTypes: true }).catch(() => []);
  for (const entry of entries) {
    const file = path.posix.join(rel, entry.name);
    if (entry.isDirectory()) await existing(projectDir, file, into);
    else into.add(file);
  }
}

/**
 * Writes the library's types into `<project>/.sdk/types`, replacing them only when they differ from
 * this CLI's (so an unchanged project's files keep their times). Returns whether anything changed.
 */
export async function writeScriptTypes(projectDir: string): Promise<boolean> {
  const files = await wanted();
  const present = new Set<string>();
  await existing(projectDir, typesDir, present);
  let same = present.size === files.size;
  for (const [file, content] of files) {
    if (!same) break;
    const current = await fs.readFile(path.join(projectDir, file)).catch(() => null);
    same = current?.equals(content) === true;
  }
  if (same) return false;
  await fs.rm(path.join(projectDir, typesDir), { recursive: true, force: true });
  for (const [file, content] of files) {
    await fs.mkdir(path.dirname(path.join(projectDir, file)), { recursive: true });
    await fs.writeFile(path.join(projectDir, file), content);
  }
  return true;
}
