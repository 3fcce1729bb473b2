import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { repoRoot } from "./child.ts";

/** Which sdk server code a run measures. */
export interface ServerSource {
  /** The directory whose packages/server/src/main.ts is started. */
  root: string;
  /** The commit the code comes from (HEAD for the working tree). */
  commit: string;
  /** For the working tree: whether packages/ has uncommitted changes (null for an export). */
  dirty: boolean | null;
  description: string;
  /** Removes the export, if one was made. */
  dispose(): void;
}

function git(...args: string[]): string {
  return execFileSync("git", ["-C", repoRoot, ...args], { encoding: "utf8", maxBuffer: 1 << 20 }).trim();
}

/** The repository as it is on disk, uncommitted changes included. */
export function workingTree(): ServerSource {
  const commit = git("rev-parse", "HEAD");
  const dirty = git("status", "--porcelain", "--", "packages").length > 0;
  return {
    root: repoRoot,
    commit,
    dirty,
    description: `working tree at ${commit.slice(0, 7)}${dirty ? " with uncommitted changes in packages/" : ""}`,
    dispose: () => {},
  };
}

/**
 * `packages/`, `docs/` and `package.json` of a commit, exported (`git archive`) into a temporary
 * directory, so the run measures that commit even while someone edits the working tree. Its
 * node_modules links to the repository's installed packages, except `@sdk/*`, which point into
 * the export. The generator (the simulator) still comes from the working tree.
 */
export function exportRef(ref: string): ServerSource {
  const commit = git("rev-parse", "--verify", `${ref}^{commit}`);
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "sdk-bench-src-"));
  try {
    const tar = execFileSync(
      "git",
      ["-C", repoRoot, "archive", "--format=tar", commit, "packages", "docs", "package.json"],
      { maxBuffer: 1 << 30 },
    );
    execFileSync("tar", ["-x", "-C", root], { input: tar });
    linkModules(root);
  } catch (error) {
    fs.rmSync(root, { recursive: true, force: true });
    throw error;
  }
  return {
    root,
    commit,
    dirty: null,
    description: `${ref} = ${commit.slice(0, 7)} (exported; uncommitted changes not included)`,
    dispose: () => fs.rmSync(root, { recursive: true, force: true }),
  };
}

function linkModules(root: string): void {
  const installed = path.join(repoRoot, "node_modules");
  const modules = path.join(root, "node_modules");
  fs.mkdirSync(path.join(modules, "@sdk"), { recursive: true });
  for (const entry of fs.readdirSync(installed)) {
    if (entry !== "@sdk") fs.symlinkSync(path.join(installed, entry), path.join(modules, entry));
  }
  // The workspaces: packages/* and docs/ (@sdk/docs).
  const workspaces = [
    ...fs.readdirSync(path.join(root, "packages")).map((p) => path.join("packages", p)),
    "docs",
  ];
  for (const dir of workspaces) {
    const manifest = path.join(root, dir, "package.json");
    if (!fs.existsSync(manifest)) continue;
    const name = (JSON.parse(fs.readFileSync(manifest, "utf8")) as { name?: string }).name;
    if (name?.startsWith("@sdk/")) {
      fs.symlinkSync(path.join(root, dir), path.join(modules, "@sdk", name.slice(5)));
    }
  }
}
