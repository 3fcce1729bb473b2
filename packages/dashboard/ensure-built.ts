// Builds the dashboard when dist/ is missing or older than its sources, so that `npm start` and the
// browser tests always see an up-to-date dashboard. A build tool of this package, not part of what
// it ships (vite is a devDependency): `node ensure-built.ts` from a checkout, or import it.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("./", import.meta.url));

function newest(dir: string): number {
  let latest = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    latest = Math.max(latest, entry.isDirectory() ? newest(full) : fs.statSync(full).mtimeMs);
  }
  return latest;
}

/** Runs `vite build` when dist/ is stale; false when that build fails. */
export function ensureBuilt(): boolean {
  const built = path.join(root, "dist", "index.html");
  const sources = Math.max(
    newest(path.join(root, "src")),
    ...["index.html", "vite.config.ts", "package.json"].map((f) => fs.statSync(path.join(root, f)).mtimeMs),
  );
  if (fs.existsSync(built) && fs.statSync(built).mtimeMs >= sources) return true;
  process.stderr.write("Building the dashboard (packages/dashboard)…\n");
  const vite = fileURLToPath(new URL("bin/vite.js", import.meta.resolve("vite/package.json")));
  const result = spawnSync(process.execPath, [vite, "build", "--logLevel", "warn"], {
    cwd: root,
    stdio: "inherit",
  });
  return result.status === 0;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  if (!ensureBuilt()) process.stderr.write("The dashboard build failed; the server starts without it.\n");
}
