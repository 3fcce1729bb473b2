// Unused files, exports, types and dependencies across the workspaces, found by knip (knip.json
// names the entry points). Fails on any finding: remove the code, or drop `export` where a name is
// used only inside its own file.
// Run: `npm run check:unused` (CI runs it).
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

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

for (const f of findings) console.error(`unused: ${f}`);
console.log(findings.length === 0 ? "unused: nothing" : `unused: ${findings.length} findings`);
process.exitCode = findings.length === 0 ? 0 : 1;
