// /app of the image: the server's workspace packages compiled to JavaScript (one tsc program, as
// `npm run pack` does) and their production dependencies, installed by `npm ci --omit=dev` from a
// lockfile cut down from the repository's to exactly what the server needs at run time.
import fs from "node:fs";
import path from "node:path";
import { compile, compiledFile, compiledName } from "../pack/compile.ts";
import { progress, run } from "./run.ts";

interface LockEntry {
  name?: string;
  version?: string;
  resolved?: string;
  link?: boolean;
  dev?: boolean;
  devOptional?: boolean;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  [key: string]: unknown;
}

/** Each workspace the server needs at run time, and which of its files it needs. */
const workspaces: Record<string, { files: string[]; keepDependencies: boolean }> = {
  "packages/server": { files: ["package.json", "src"], keepDependencies: true },
  "packages/protocol": { files: ["package.json", "src"], keepDependencies: true },
  "packages/sandbox": { files: ["package.json", "src"], keepDependencies: true },
  "packages/device": { files: ["package.json", "src"], keepDependencies: true },
  docs: { files: ["package.json", "index.ts", "*.md"], keepDependencies: true },
  // The server serves the built files only; the dashboard's own dependencies are bundled in them.
  "packages/dashboard": { files: ["package.json", "built.ts", "dist"], keepDependencies: false },
};

/** The lockfile location a dependency `name` of the package at `from` resolves to (Node's lookup). */
function resolve(packages: Record<string, LockEntry>, from: string, name: string): string | undefined {
  let dir = from;
  for (;;) {
    const candidate = dir === "" ? `node_modules/${name}` : `${dir}/node_modules/${name}`;
    if (packages[candidate]) return candidate;
    if (dir === "") return undefined;
    const up = dir.lastIndexOf("/node_modules/");
    dir = up === -1 ? "" : dir.slice(0, up);
  }
}

/** A manifest's entry points (`exports`, `bin`) at the compiled files: `./src/a.ts` → `./src/a.js`. */
function compiledEntries(field: unknown): unknown {
  if (typeof field === "string") return compiledName(field);
  if (field === null || typeof field !== "object") return field;
  return Object.fromEntries(Object.entries(field).map(([key, value]) => [key, compiledEntries(value)]));
}

function trimmedManifest(manifest: LockEntry, keepDependencies: boolean): LockEntry {
  const { devDependencies: _dev, scripts: _scripts, ...rest } = manifest;
  for (const field of ["exports", "bin"] as const)
    if (field in rest) rest[field] = compiledEntries(rest[field]);
  if (!keepDependencies) {
    delete rest.dependencies;
    delete rest.optionalDependencies;
    delete rest.peerDependencies;
  }
  return rest;
}

/** The repository's lockfile, cut down to the workspaces above and everything they depend on. */
function trimLockfile(repo: string, manifests: Record<string, LockEntry>, root: LockEntry): object {
  const lock = JSON.parse(fs.readFileSync(path.join(repo, "package-lock.json"), "utf8")) as {
    packages: Record<string, LockEntry>;
  };
  const packages = lock.packages;
  const kept: Record<string, LockEntry> = {};
  const queue: string[] = [];
  for (const [dir, manifest] of Object.entries(manifests)) {
    const { devDependencies: _d, scripts: _s, ...entry } = { ...packages[dir], ...manifest };
    kept[dir] = { ...entry, dependencies: manifest.dependencies };
    if (!manifest.dependencies) delete kept[dir].dependencies;
    queue.push(dir);
  }
  while (queue.length > 0) {
    const from = queue.shift()!;
    const entry = kept[from]!;
    const wanted = { ...entry.dependencies, ...entry.optionalDependencies, ...entry.peerDependencies };
    for (const name of Object.keys(wanted)) {
      const at = resolve(packages, from, name);
      if (at === undefined) {
        const optional = entry.optionalDependencies?.[name] ?? entry.peerDependenciesMeta?.[name]?.optional;
        if (optional || entry.peerDependencies?.[name]) continue;
        throw new Error(`package-lock.json: ${from} depends on ${name}, which the lockfile does not hold`);
      }
      if (kept[at]) continue;
      const { dev: _dev, devOptional: _devOptional, ...found } = packages[at]!;
      kept[at] = found;
      if (found.link) {
        if (!kept[found.resolved!])
          throw new Error(`${at} links to ${found.resolved}, which the image leaves out`);
        continue;
      }
      queue.push(at);
    }
  }
  for (const dir of Object.keys(manifests)) {
    const name = manifests[dir]!.name!;
    kept[`node_modules/${name}`] = { resolved: dir, link: true };
  }
  const sorted = Object.fromEntries(Object.entries(kept).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  return {
    name: root.name,
    version: root.version,
    lockfileVersion: 3,
    requires: true,
    packages: { "": root, ...sorted },
  };
}

/**
 * Replaces the staged workspaces' `.ts` files by their compiled `.js`, so that a container neither
 * loads Node's type stripper (about 18 MB in each thread that strips: the main one and every
 * scripts worker) nor strips some 180 files at each start (a quarter of a boot on x86).
 */
function compileStaged(dir: string): void {
  const sources = fs.globSync("**/*.ts", { cwd: dir }).filter((file) => !file.endsWith(".d.ts"));
  const workDir = `${dir}.tsc`;
  progress(`compiling ${sources.length} TypeScript files to JavaScript`);
  try {
    // The staged paths are the repository's: compile the repository's files, copy the output over.
    compile(sources, { workDir, declaration: false });
    for (const file of sources) {
      fs.copyFileSync(compiledFile(file, ".js", workDir), path.join(dir, compiledName(file)));
      fs.rmSync(path.join(dir, file));
    }
  } finally {
    fs.rmSync(workDir, { recursive: true, force: true });
  }
}

/** Stages `/app` in `dir` (which must not exist) and installs its production dependencies. */
export function stageApp(repo: string, dir: string, npmCache: string | undefined): void {
  const rootManifest = JSON.parse(fs.readFileSync(path.join(repo, "package.json"), "utf8")) as LockEntry;
  const root: LockEntry = {
    name: rootManifest.name,
    version: rootManifest.version,
    license: rootManifest.license,
    workspaces: Object.keys(workspaces),
  };
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(
    path.join(dir, "package.json"),
    `${JSON.stringify({ ...root, private: true, type: "module", description: rootManifest.description }, null, 2)}\n`,
  );
  const manifests: Record<string, LockEntry> = {};
  for (const [workspace, { files, keepDependencies }] of Object.entries(workspaces)) {
    const from = path.join(repo, workspace);
    const to = path.join(dir, workspace);
    for (const file of fs.globSync(files, { cwd: from })) {
      fs.cpSync(path.join(from, file), path.join(to, file), { recursive: true });
    }
    const manifest = JSON.parse(fs.readFileSync(path.join(from, "package.json"), "utf8")) as LockEntry;
    manifests[workspace] = trimmedManifest(manifest, keepDependencies);
    fs.writeFileSync(path.join(to, "package.json"), `${JSON.stringify(manifests[workspace], null, 2)}\n`);
  }
  compileStaged(dir);
  fs.writeFileSync(
    path.join(dir, "package-lock.json"),
    `${JSON.stringify(trimLockfile(repo, manifests, root), null, 2)}\n`,
  );
  fs.copyFileSync(path.join(repo, "deploy/healthcheck.mjs"), path.join(dir, "healthcheck.mjs"));
  progress("installing the production dependencies (npm ci --omit=dev, from the lockfile)");
  const cacheArgs = npmCache ? ["--cache", npmCache] : [];
  run(
    "npm",
    [
      "ci",
      "--omit=dev",
      "--ignore-scripts",
      "--prefer-offline",
      "--no-audit",
      "--no-fund",
      "--silent",
      ...cacheArgs,
    ],
    { cwd: dir },
  );
  fs.rmSync(path.join(dir, "node_modules/.package-lock.json"), { force: true });
  // Type declarations some packages list as dependencies (mqtt: @types/ws, which pulls in
  // @types/node): Node never loads them.
  fs.rmSync(path.join(dir, "node_modules/@types"), { recursive: true, force: true });
}

/** Development tools that must never reach the image. */
const devTools = [
  "typescript",
  "esbuild",
  "@biomejs",
  "vite",
  "playwright-core",
  "playwright",
  "knip",
  "@types",
];

/** Fails when a development tool was installed; returns the installed packages' count. */
export function checkProductionOnly(dir: string): number {
  const found = devTools.filter((name) => fs.existsSync(path.join(dir, "node_modules", name)));
  if (found.length > 0) throw new Error(`the image would contain development tools: ${found.join(", ")}`);
  const lock = JSON.parse(fs.readFileSync(path.join(dir, "package-lock.json"), "utf8")) as {
    packages: object;
  };
  return Object.keys(lock.packages).filter(
    (p) => p.includes("node_modules/") && !p.startsWith("node_modules/@sdk/"),
  ).length;
}
