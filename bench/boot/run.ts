// Boot to ready on an empty data directory: spawn the real server (SQLite in a new temporary
// DATA_DIR) and time until GET /ready answers 200. The reference is a bare node:http server in
// the same kind of child process: the floor Node itself sets on this machine.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { Child, repoRoot } from "../lib/child.ts";
import { wallMs } from "../lib/clock.ts";
import { resultsFile, writeResults } from "../lib/json.ts";
import { latency } from "../lib/measure.ts";
import { freePort, host, sleep } from "../lib/net.ts";
import { positive } from "../lib/options.ts";
import { exportRef, workingTree } from "../lib/server-source.ts";

const usage = "usage: node bench/boot/run.ts [--runs N] [--server-ref GIT-REF]";
const { values } = parseArgs({
  options: { runs: { type: "string" }, "server-ref": { type: "string" }, help: { type: "boolean" } },
});
if (values.help) {
  console.log(usage);
  process.exit(0);
}
const runs = positive("runs", values.runs, 7, usage);
/** With --server-ref, that commit's server boots too, in the same rounds: a before/after on one machine state. */
const atRef = values["server-ref"] === undefined ? undefined : exportRef(values["server-ref"]);

const referenceScript = path.join(os.tmpdir(), `sdk-bench-boot-reference-${process.pid}.mjs`);
fs.writeFileSync(
  referenceScript,
  `import http from "node:http";
http.createServer((_q, r) => r.end('{"success":true,"result":{"status":"ready"}}')).listen(Number(process.env.PORT), process.env.HOST);
`,
);

/** Polls `url` until it answers 200; the time from `started` in ms. */
async function until200(url: string, started: number, child: Child): Promise<number> {
  for (;;) {
    if (!child.alive) throw new Error(`${child.name} exited before it was ready`);
    try {
      const res = await fetch(url);
      await res.arrayBuffer();
      if (res.status === 200) return wallMs() - started;
    } catch {
      // not listening yet
    }
    await sleep(2);
  }
}

/** What boots, under the name its row gets: the working tree's server, the --server-ref one, the reference. */
interface Server {
  kind: string;
  script: string;
}
const serverScript = (root: string) => path.join(root, "packages/server/src/main.ts");
const servers: Server[] = [
  { kind: "sdk", script: serverScript(repoRoot) },
  ...(atRef ? [{ kind: `sdk at ${values["server-ref"]}`, script: serverScript(atRef.root) }] : []),
  { kind: "reference", script: referenceScript },
];

async function once({ kind, script }: Server): Promise<number> {
  const port = await freePort();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "sdk-bench-boot-"));
  const started = wallMs();
  const child = new Child({
    name: kind,
    script,
    env: { PORT: String(port), HOST: host, DATA_DIR: dataDir, LOG_LEVEL: "warn", MDNS: "false" },
  });
  try {
    return await until200(`http://${host}:${port}/ready`, started, child);
  } finally {
    await child.stop("SIGTERM");
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

const figures: Record<string, number[]> = Object.fromEntries(servers.map(({ kind }) => [kind, []]));
try {
  for (let i = 0; i < runs; i++) {
    // Each round in another order, so neither server always boots right after the other.
    const order = i % 2 === 0 ? servers : [...servers].reverse();
    for (const server of order) figures[server.kind]!.push(await once(server));
  }
} finally {
  fs.rmSync(referenceScript, { force: true });
  atRef?.dispose();
}

const rows = Object.entries(figures).map(([kind, times]) => {
  const sorted = [...times].sort((a, b) => a - b);
  return { kind, times: times.map(Math.round), ...latency(sorted, 0) };
});
console.log(`boot to ready on an empty DATA_DIR, ${runs} runs each (ms): spawn → GET /ready 200`);
console.log("| server | p50 | p99 | max | runs |");
console.log("|---|---:|---:|---:|---|");
for (const row of rows) {
  console.log(`| ${row.kind} | ${row.p50Ms} | ${row.p99Ms} | ${row.maxMs} | ${row.times.join(", ")} |`);
}
const file = resultsFile(`boot-${new Date().toISOString().slice(0, 10)}`);
writeResults(file, {
  at: new Date().toISOString(),
  loadAverage: os.loadavg(),
  runs,
  server: workingTree().description,
  ...(atRef && { serverRef: atRef.description }),
  rows,
});
console.log(`results: ${path.relative(process.cwd(), file)}`);
