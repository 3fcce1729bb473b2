// `npm run pack`: compiles @sdk/cli, @sdk/mcp and @sdk/device (with the packages of ours they need) to
// JavaScript with declarations, stages each in dist/npm/<name>/ and packs it into
// dist/packages/<name>-<version>.tgz. See docs/architecture.md ("Publishing").
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { compile } from "./compile.ts";
import { stage } from "./stage.ts";
import { dependencyClosure, type PackageJson, repoRoot, workspacePackages } from "./workspace.ts";

/** The packages users install. Everything of ours they need travels inside them. */
export const published = ["@sdk/cli", "@sdk/mcp", "@sdk/device"];

export interface Packed {
  name: string;
  tarball: string;
  bytes: number;
  bundled: string[];
  dependencies: Record<string, string>;
}

function ensureDashboard(): void {
  const tool = path.join(repoRoot, "packages", "dashboard", "ensure-built.ts");
  spawnSync(process.execPath, [tool], { stdio: ["ignore", "inherit", "inherit"] });
  if (!fs.existsSync(path.join(repoRoot, "packages", "dashboard", "dist", "index.html"))) {
    throw new Error(
      "the dashboard did not build (packages/dashboard/dist): `sdk dev` would serve no dashboard",
    );
  }
}

/** Runs the whole pipeline; returns the tarballs it wrote. */
export function pack(): Packed[] {
  const all = workspacePackages();
  // Everything the published packages may need, compiled once; staging then keeps what their code uses.
  const candidates = dependencyClosure(published, all);
  if (candidates.some((p) => p.name === "@sdk/dashboard")) ensureDashboard();
  const refreshed = workspacePackages();
  compile(
    dependencyClosure(published, refreshed).flatMap((p) =>
      p.files.filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts")),
    ),
  );

  const root = JSON.parse(fs.readFileSync(path.join(repoRoot, "package.json"), "utf8")) as PackageJson;
  const publication = { repository: root.repository, homepage: root.homepage, bugs: root.bugs };
  if (!root.repository) {
    process.stderr.write(
      'note: the root package.json has no "repository"; the packages will have none either\n',
    );
  }
  const tarballs = path.join(repoRoot, "dist", "packages");
  fs.rmSync(tarballs, { recursive: true, force: true });
  fs.mkdirSync(tarballs, { recursive: true });
  const packed: Packed[] = [];
  for (const name of published) {
    const dir = path.join(repoRoot, "dist", "npm", name.replace(/^@/, "").replace("/", "-"));
    const staged = stage(name, refreshed, dir, publication);
    const npm = spawnSync(
      "npm",
      ["pack", dir, "--pack-destination", tarballs, "--ignore-scripts", "--json"],
      {
        cwd: repoRoot,
        encoding: "utf8",
      },
    );
    if (npm.status !== 0) throw new Error(`npm pack ${dir} failed:\n${npm.stderr}`);
    const [info] = JSON.parse(npm.stdout) as { filename: string }[];
    const tarball = path.join(tarballs, info!.filename);
    packed.push({
      name,
      tarball,
      bytes: fs.statSync(tarball).size,
      bundled: staged.bundled,
      dependencies: staged.dependencies,
    });
  }
  return packed;
}

if (import.meta.main) {
  const started = performance.now();
  for (const p of pack()) {
    const kb = (p.bytes / 1024).toFixed(0);
    process.stdout.write(
      `${path.relative(repoRoot, p.tarball)}  ${kb} KB  bundles ${p.bundled.join(", ") || "nothing"}; depends on ${Object.keys(p.dependencies).join(", ") || "nothing"}\n`,
    );
  }
  process.stdout.write(`packed in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
}
