// Unused files, exports, types and dependencies across the workspaces, found by knip (knip.json
// names the entry points). Fails on anything unused that scripts/checks/temporary-unused.ts does
// not list, and on an entry of that list that is no longer unused.
// Run: `npm run check:unused` (CI runs it).
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { temporaryUnused } from "./temporary-unused.ts";

interface Issue {
  file: string;
  [category: string]: unknown;
}

const categories = [
  "files",
  "dependencies",
  "devDependencies",
  "optionalPeerDependencies",
  "unlisted",
  "binaries",
  "unresolved",
  "exports",
  "types",
  "enumMembers",
  "namespaceMembers",
  "duplicates",
];

const root = fileURLToPath(new URL("../../", import.meta.url));
const knip = fileURLToPath(new URL("node_modules/knip/bin/knip.js", `file://${root}`));
const run = spawnSync(process.execPath, [knip, "--no-progress", "--reporter", "json"], {
  cwd: root,
  encoding: "utf8",
  maxBuffer: 64 * 1024 * 1024,
});
if (run.error || (run.status !== 0 && run.status !== 1) || !run.stdout.trim().startsWith("{")) {
  console.error(run.stderr || run.error?.message || "knip did not answer");
  process.exit(2);
}

/** One line per finding: "exports packages/x/src/y.ts: name", "files packages/x/src/z.ts". */
const findings = (JSON.parse(run.stdout) as { issues: Issue[] }).issues.flatMap((issue) =>
  categories.flatMap((category) => {
    const found = issue[category];
    if (!Array.isArray(found) || found.length === 0) return [];
    if (category === "files") return [`files ${issue.file}`];
    return found.flat().map((f: { name: string }) => `${category} ${issue.file}: ${f.name}`);
  }),
);

const allowed = new Set(temporaryUnused);
const fresh = findings.filter((f) => !allowed.has(f));
const stale = temporaryUnused.filter((f) => !findings.includes(f));
for (const f of fresh) console.error(`unused: ${f}`);
for (const f of stale)
  console.error(`no longer unused, remove it from scripts/checks/temporary-unused.ts: ${f}`);
console.log(
  `unused: ${fresh.length} new, ${stale.length} stale, ${findings.length - fresh.length} still on the temporary list`,
);
process.exitCode = fresh.length === 0 && stale.length === 0 ? 0 : 1;
