// Stages one published package in dist/npm/<name>/: its compiled files, a publication package.json,
// and the compiled copies of our packages it needs under its node_modules (bundleDependencies), with
// the third-party packages those need hoisted into its own dependencies.
import fs from "node:fs";
import path from "node:path";
import { compiledFile, compiledName } from "./compile.ts";
import {
  dependencyClosure,
  externalDependencies,
  internalDependencies,
  type PackageJson,
  repoRoot,
  type WorkspacePackage,
} from "./workspace.ts";

/** The Node.js the published code needs: the oldest release the repository supports and tests. */
const nodeEngine = ">=22.18";

const relativeTs = /(["'])(\.{1,2}\/[^"']+)\.ts\1/g;
const toJs = (text: string) => text.replace(relativeTs, "$1$2.js$1");

/** The JavaScript a package ships, after compiling: what decides which dependencies it needs. */
function shippedCode(pkg: WorkspacePackage): string {
  return pkg.files
    .filter((file) => /\.(ts|mjs)$/.test(file) && !file.endsWith(".d.ts"))
    .map((file) =>
      fs.readFileSync(file.endsWith(".ts") ? compiledFile(file, ".js") : path.join(repoRoot, file), "utf8"),
    )
    .join("\n");
}

/** Whether code names a package in a string literal: an import, `import.meta.resolve`, a require. */
function names(code: string, dependency: string): boolean {
  const escaped = dependency.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
  return new RegExp(`["'\`]${escaped}(["'\`]|/)`).test(code);
}

function copyFiles(pkg: WorkspacePackage, into: string): void {
  for (const file of pkg.files) {
    const inside = path.relative(pkg.dir, file);
    const target = path.join(into, compiledName(inside));
    fs.mkdirSync(path.dirname(target), { recursive: true });
    if (file.endsWith(".ts") && !file.endsWith(".d.ts")) {
      fs.copyFileSync(compiledFile(file, ".js"), target);
      const declarations = fs.readFileSync(compiledFile(file, ".d.ts"), "utf8");
      fs.writeFileSync(target.replace(/\.js$/, ".d.ts"), toJs(declarations));
    } else if (file.endsWith(".mjs")) {
      fs.writeFileSync(target, toJs(fs.readFileSync(path.join(repoRoot, file), "utf8")));
    } else {
      fs.copyFileSync(path.join(repoRoot, file), target);
    }
  }
}

function publishedExports(exports: Record<string, string> | undefined) {
  if (!exports) return undefined;
  return Object.fromEntries(
    Object.entries(exports).map(([key, target]) =>
      target.endsWith(".ts") && !target.endsWith(".d.ts")
        ? [key, { types: target.replace(/\.ts$/, ".d.ts"), default: compiledName(target) }]
        : [key, target],
    ),
  );
}

function manifestFor(pkg: WorkspacePackage, fields: Partial<PackageJson> & Record<string, unknown>) {
  const m = pkg.manifest;
  return {
    name: m.name,
    version: m.version,
    description: m.description,
    license: m.license ?? "AGPL-3.0-only",
    type: m.type ?? "module",
    ...fields,
    exports: publishedExports(m.exports),
  };
}

function readme(pkg: WorkspacePackage): string {
  const own = path.join(repoRoot, pkg.dir, "README.md");
  if (fs.existsSync(own)) return fs.readFileSync(own, "utf8");
  const bins = Object.keys(pkg.manifest.bin ?? {});
  return `# ${pkg.name}

${pkg.manifest.description ?? ""}
${bins.length > 0 ? `\n\`npm install -g ${pkg.name}\` installs ${bins.map((b) => `\`${b}\``).join(", ")}.\n` : ""}
Needs Node.js 22.18 or newer. Part of sdk, self-hosted device management for Raspberry Pi Pico W and
Pico 2 W boards. Licence: AGPL-3.0-only.
`;
}

export interface Staged {
  name: string;
  dir: string;
  bundled: string[];
  dependencies: Record<string, string>;
}

/** Stages `name` into `dir` (emptied first). The packages must have been compiled. */
export function stage(
  name: string,
  all: Map<string, WorkspacePackage>,
  dir: string,
  publication: Pick<PackageJson, "repository" | "homepage" | "bugs">,
): Staged {
  const code = new Map<string, string>();
  const codeOf = (pkg: WorkspacePackage) => {
    if (!code.has(pkg.name)) code.set(pkg.name, shippedCode(pkg));
    return code.get(pkg.name)!;
  };
  const needs = (pkg: WorkspacePackage) => internalDependencies(pkg).filter((d) => names(codeOf(pkg), d));
  const [root, ...bundled] = dependencyClosure([name], all, needs);
  if (!root) throw new Error(`${name} is not a workspace package`);

  const dependencies: Record<string, string> = {};
  const wantedBy: Record<string, string> = {};
  for (const pkg of [root, ...bundled]) {
    for (const [dep, range] of externalDependencies(pkg)) {
      if (!names(codeOf(pkg), dep)) continue;
      if (dependencies[dep] !== undefined && dependencies[dep] !== range) {
        throw new Error(
          `${pkg.name} wants ${dep}@${range} but ${wantedBy[dep]} wants ${dep}@${dependencies[dep]}: use one range in both package.json files`,
        );
      }
      dependencies[dep] = range;
      wantedBy[dep] = pkg.name;
    }
  }
  const sorted = Object.fromEntries(Object.entries(dependencies).sort(([a], [b]) => a.localeCompare(b)));

  fs.rmSync(dir, { recursive: true, force: true });
  copyFiles(root, dir);
  fs.copyFileSync(path.join(repoRoot, "LICENSE"), path.join(dir, "LICENSE"));
  fs.writeFileSync(path.join(dir, "README.md"), readme(root));
  const topLevel = [
    ...new Set(root.files.map((f) => compiledName(path.relative(root.dir, f)).split("/")[0]!)),
  ];
  fs.writeFileSync(
    path.join(dir, "package.json"),
    `${JSON.stringify(
      manifestFor(root, {
        bin: root.manifest.bin,
        engines: { node: nodeEngine },
        files: topLevel.sort(),
        ...publication,
        // npm packs and installs a bundled package only when `dependencies` names it too.
        dependencies: {
          ...Object.fromEntries(bundled.map((p) => [p.name, p.manifest.version])),
          ...sorted,
        },
        bundleDependencies: bundled.map((p) => p.name),
      }),
      null,
      2,
    )}\n`,
  );
  for (const pkg of bundled) {
    const into = path.join(dir, "node_modules", ...pkg.name.split("/"));
    copyFiles(pkg, into);
    // Only our packages: npm counts every dependency of a bundled package as part of the bundle and
    // would not install it, so the third-party ones are declared by the published package instead.
    const own = Object.fromEntries(needs(pkg).map((d) => [d, all.get(d)!.manifest.version]));
    fs.writeFileSync(
      path.join(into, "package.json"),
      `${JSON.stringify(manifestFor(pkg, { engines: { node: nodeEngine }, dependencies: own }), null, 2)}\n`,
    );
  }
  return { name, dir, bundled: bundled.map((p) => p.name), dependencies: sorted };
}
