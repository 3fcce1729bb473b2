// Builds the dashboard when packages/dashboard/dist is missing or older than its sources, so that
// `npm start` always serves an up-to-date dashboard. Run by `npm start` and by the browser tests.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.dirname(fileURLToPath(import.meta.resolve("@sdk/dashboard/package.json")));
const built = path.join(root, "dist", "index.html");

function newest(dir) {
  let latest = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    latest = Math.max(latest, entry.isDirectory() ? newest(full) : fs.statSync(full).mtimeMs);
  }
  return latest;
}

const sources = Math.max(
  newest(path.join(root, "src")),
  ...["index.html", "vite.config.ts", "package.json"].map((f) => fs.statSync(path.join(root, f)).mtimeMs),
);
const current = fs.existsSync(built) && fs.statSync(built).mtimeMs >= sources;
if (!current) {
  process.stderr.write("Building the dashboard (packages/dashboard)…\n");
  const vite = path.join(root, "..", "..", "node_modules", "vite", "bin", "vite.js");
  const result = spawnSync(process.execPath, [vite, "build", "--logLevel", "warn"], {
    cwd: root,
    stdio: "inherit",
  });
  if (result.status !== 0) {
    process.stderr.write("The dashboard build failed; the server starts without it.\n");
    process.exit(0);
  }
}
