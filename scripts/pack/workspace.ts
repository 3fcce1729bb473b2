// The workspace packages as the pack pipeline sees them: what each one publishes (its package.json
// `files`, or src/ plus its bin and export targets) and which of its dependencies are ours.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { workspaces } from "../checks/sources.ts";

export const repoRoot = fileURLToPath(new URL("../../", import.meta.url));

/** Packages that exist for the tests only: nothing published may contain them. */
const devOnly = new Set(["@sdk/test-helpers", "@sdk/conformance", "@sdk/firmware-host"]);

export interface PackageJson {
  name: string;
  version: string;
  description?: string;
  license?: string;
  type?: string;
  private?: boolean;
  bin?: Record<string, string>;
  exports?: Record<string, string>;
  engines?: Record<string, string>;
  files?: string[];
  dependencies?: Record<string, string>;
  repository?: unknown;
  homepage?: string;
  bugs?: unknown;
}

export interface WorkspacePackage {
  name: string;
  /** Repository-relative directory. */
  dir: string;
  manifest: PackageJson;
  /** Repository-relative paths of the files it publishes, as sources (.ts before compiling). */
  files: string[];
}

const isOurs = (name: string) => name.startsWith("@sdk/");

function walk(dir: string, rel: string, out: string[]): void {
  for (const entry of fs.readdirSync(path.join(repoRoot, dir, rel), { withFileTypes: true })) {
    const file = path.posix.join(rel, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== "node_modules" && entry.name !== "test") walk(dir, file, out);
    } else if (!/\.test\.ts$/.test(entry.name)) out.push(path.posix.join(dir, file));
  }
}

/** `files` entries: a directory, a file, or `*.ext` in the package's top directory. */
function expandFiles(dir: string, entries: string[]): string[] {
  const out: string[] = [];
  for (const entry of entries) {
    const clean = entry.replace(/^\.\//, "").replace(/\/$/, "");
    const star = /^\*(\.[\w.]+)$/.exec(clean);
    if (star) {
      for (const name of fs.readdirSync(path.join(repoRoot, dir)).sort()) {
        if (name.endsWith(star[1]!) && fs.statSync(path.join(repoRoot, dir, name)).isFile()) {
          out.push(path.posix.join(dir, name));
        }
      }
      continue;
    }
    const full = path.join(repoRoot, dir, clean);
    if (!fs.existsSync(full)) continue; // as npm does; e.g. the dashboard's dist/ before its build
    if (fs.statSync(full).isDirectory()) walk(dir, clean, out);
    else out.push(path.posix.join(dir, clean));
  }
  return [...new Set(out)].sort();
}

function defaultFiles(dir: string, manifest: PackageJson): string[] {
  const targets = [...Object.values(manifest.bin ?? {}), ...Object.values(manifest.exports ?? {})];
  const outside = targets
    .map((t) => t.replace(/^\.\//, ""))
    .filter((t) => !t.startsWith("src/") && t !== "package.json")
    .map((t) => (t.startsWith("bin/") ? "bin" : t));
  const src = fs.existsSync(path.join(repoRoot, dir, "src")) ? ["src"] : [];
  return [...src, ...new Set(outside)];
}

/** Every workspace package by name. */
export function workspacePackages(): Map<string, WorkspacePackage> {
  const byName = new Map<string, WorkspacePackage>();
  for (const ws of workspaces()) {
    if (ws.dir === "") continue;
    const manifest = JSON.parse(
      fs.readFileSync(path.join(repoRoot, ws.dir, "package.json"), "utf8"),
    ) as PackageJson;
    const files = expandFiles(ws.dir, manifest.files ?? defaultFiles(ws.dir, manifest));
    byName.set(manifest.name, { name: manifest.name, dir: ws.dir, manifest, files });
  }
  return byName;
}

/** Our packages a package depends on at run time (package.json `dependencies`). */
export function internalDependencies(pkg: WorkspacePackage): string[] {
  return Object.keys(pkg.manifest.dependencies ?? {}).filter(isOurs);
}

/** Third-party packages a package depends on at run time, with their ranges. */
export function externalDependencies(pkg: WorkspacePackage): [string, string][] {
  return Object.entries(pkg.manifest.dependencies ?? {}).filter(([name]) => !isOurs(name));
}

/** The packages reachable from `roots` through `dependencies`, roots included. */
export function dependencyClosure(
  roots: string[],
  all: Map<string, WorkspacePackage>,
  next: (pkg: WorkspacePackage) => string[] = internalDependencies,
): WorkspacePackage[] {
  const seen = new Map<string, WorkspacePackage>();
  const visit = (name: string, from: string) => {
    if (seen.has(name)) return;
    if (devOnly.has(name))
      throw new Error(`${from} depends on ${name}, a test-only package: it cannot be published`);
    const pkg = all.get(name);
    if (!pkg) throw new Error(`${from} depends on ${name}, which is not a workspace package`);
    seen.set(name, pkg);
    for (const dep of next(pkg)) visit(dep, name);
  };
  for (const root of roots) visit(root, "the pack list");
  return [...seen.values()];
}
