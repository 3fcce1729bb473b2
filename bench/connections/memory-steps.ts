/**
 * Where the bytes per device go (diagnosis): the sdk server with the counter script deployed; one
 * device connects first (so the script worker and its QuickJS module exist), then the rest in
 * `--steps` equal steps. After each step (5 s to settle, then a forced GC in the main thread and in
 * each worker thread) it prints RSS, the main thread's heap and the worker threads' heaps; the last
 * line gives the slopes per device between the first device and all of them, so fixed costs (the
 * worker thread, QuickJS's module) are out of the figures.
 *
 *   node bench/connections/memory-steps.ts [--devices 10000] [--steps 2] [--server-ref REF] [--only sdk|reference]
 */
import fs from "node:fs";
import { parseArgs } from "node:util";
import { sleep } from "../lib/net.ts";
import { sampleProcess } from "../lib/proc.ts";
import type { Credentials } from "../lib/provision.ts";
import { progressLog, runBench } from "../lib/run.ts";
import { exportRef, type ServerSource, workingTree } from "../lib/server-source.ts";
import { SdkTarget, startTarget, type Target } from "../lib/targets.ts";
import { Generator } from "./generator.ts";
import { waitAllOnline } from "./measure.ts";
import { deployScript } from "./phases.ts";

const { values } = parseArgs({
  options: {
    devices: { type: "string", default: "10000" },
    steps: { type: "string", default: "2" },
    "server-ref": { type: "string" },
    only: { type: "string", default: "sdk" },
    "no-script": { type: "boolean" },
    snapshots: { type: "string" },
  },
});
const n = Number(values.devices);
const steps = Number(values.steps);
const log = progressLog();
const live = {
  target: undefined as Target | undefined,
  generators: [] as Generator[],
  source: undefined as ServerSource | undefined,
};

async function cleanUp(): Promise<void> {
  await Promise.allSettled(live.generators.map((g) => g.stop()));
  await live.target?.dispose();
  live.source?.dispose();
}

interface Row {
  online: number;
  rss: number;
  rssGc: number;
  heap: number;
  heapTotal: number;
  workerHeap: number;
  workerExternal: number;
  external: number;
}

/** RSS of each mapping of the process, keyed by start address (with its size and name). */
function smaps(pid: number): Map<string, { size: number; rss: number; name: string }> {
  const out = new Map<string, { size: number; rss: number; name: string }>();
  let current: { size: number; rss: number; name: string } | undefined;
  for (const line of fs.readFileSync(`/proc/${pid}/smaps`, "utf8").split("\n")) {
    const m = /^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (m) {
      current = { size: Number.parseInt(m[2]!, 16) - Number.parseInt(m[1]!, 16), rss: 0, name: m[3]!.trim() };
      out.set(m[1]!, current);
    } else if (line.startsWith("Rss:") && current) current.rss = Number(line.split(/\s+/)[1]) * 1024;
  }
  return out;
}
const mapsAt: Map<string, { size: number; rss: number; name: string }>[] = [];

function smapsDelta(
  a: Map<string, { size: number; rss: number; name: string }>,
  b: Map<string, { size: number; rss: number; name: string }>,
): void {
  const byKind = new Map<string, number>();
  const rows: [string, number, number, string][] = [];
  for (const [start, m] of b) {
    const before = a.get(start)?.rss ?? 0;
    const d = m.rss - before;
    const kind = m.name
      ? m.name.startsWith("[")
        ? m.name
        : "file"
      : `anon ${m.size <= 1048576 ? "<=1MiB" : `${(m.size / 1048576).toFixed(1)}MiB`}`;
    byKind.set(kind, (byKind.get(kind) ?? 0) + d);
    rows.push([start, m.size, d, m.name]);
  }
  for (const [start, m] of a)
    if (!b.has(start)) {
      const kind = m.name ? (m.name.startsWith("[") ? m.name : "file") : `anon`;
      byKind.set(kind, (byKind.get(kind) ?? 0) - m.rss);
      rows.push([start, m.size, -m.rss, `${m.name} (gone)`]);
    }
  rows.sort((x, y) => Math.abs(y[2]) - Math.abs(x[2]));
  log(
    `  RSS delta by kind (MiB): ${[...byKind]
      .filter(([, v]) => Math.abs(v) > 262144)
      .map(([k, v]) => `${k} ${(v / 1048576).toFixed(1)}`)
      .join(", ")}`,
  );
  for (const [start, size, d, name] of rows.slice(0, 12))
    log(`    ${start} size ${(size / 1048576).toFixed(2)} MiB: ${(d / 1048576).toFixed(2)} MiB ${name}`);
}

async function measure(target: Target, online: number): Promise<Row> {
  await sleep(5_000);
  const rss = sampleProcess(target.child.pid).rssBytes;
  const m = await target.child.memory(true);
  mapsAt.push(smaps(target.child.pid));
  if (values.snapshots && (online === 1 || online === n)) {
    const path = `${values.snapshots}/${target.name}-${online}.heapsnapshot`;
    await target.child.request({ type: "snapshot", path }, "snapshot", 300_000);
    log(`  heap snapshot: ${path}`);
  }
  const row = {
    online,
    rss,
    rssGc: sampleProcess(target.child.pid).rssBytes,
    heap: m.heapUsedBytes,
    heapTotal: m.heapTotalBytes,
    workerHeap: m.workerHeapUsedBytes,
    workerExternal: m.workerExternalBytes,
    external: m.externalBytes,
  };
  const mb = (b: number) => (b / 1048576).toFixed(1);
  log(
    `${online} online: RSS ${mb(row.rss)} MiB (after GC ${mb(row.rssGc)}), main heap ${mb(row.heap)} of ${mb(row.heapTotal)}, ` +
      `main external ${mb(row.external)}, worker heap ${mb(row.workerHeap)} of ${mb(m.workerHeapTotalBytes)} (${m.workers} workers), worker external ${mb(row.workerExternal)}`,
  );
  log(
    `  spaces (committed/used MiB): ${Object.entries(m.spaces)
      .filter(([, v]) => v.sizeBytes > 1048576)
      .map(([k, v]) => `${k} ${mb(v.sizeBytes)}/${mb(v.usedBytes)}`)
      .join(", ")}`,
  );
  return row;
}

async function main(): Promise<void> {
  const source = values["server-ref"] ? exportRef(values["server-ref"]) : workingTree();
  live.source = source;
  const target = await startTarget(values.only!, source, "bench/connections/reference-server.ts", {
    heartbeatSeconds: 5,
  });
  live.target = target;
  const credentials: Credentials[] = await target.prepare(n, log);
  if (target instanceof SdkTarget && !values["no-script"]) await deployScript(target);
  const connect = async (devices: Credentials[], total: number) => {
    const generator = await Generator.launch(1);
    live.generators.push(generator);
    await generator.start(target.server, devices, 200, 300_000);
    await waitAllOnline(generator, devices.length, 300_000, log);
    return total;
  };
  await sleep(2_000);
  const rows: Row[] = [await measure(target, 0)];
  await connect(credentials.slice(0, 1), 1);
  rows.push(await measure(target, 1));
  const per = Math.ceil((n - 1) / steps);
  for (let from = 1; from < n; from += per) {
    const part = credentials.slice(from, Math.min(n, from + per));
    await connect(part, from + part.length);
    rows.push(await measure(target, from + part.length));
  }
  log("smaps: from 1 online to all online");
  smapsDelta(mapsAt[1]!, mapsAt[mapsAt.length - 1]!);
  const first = rows[1]!;
  const last = rows[rows.length - 1]!;
  const d = last.online - first.online;
  const slope = (k: keyof Row) => Math.round((last[k] - first[k]) / d);
  const zero = rows[0]!;
  console.log(
    JSON.stringify({
      devices: n,
      firstDeviceCost: {
        rss: first.rss - zero.rss,
        heap: first.heap - zero.heap,
        workerHeap: first.workerHeap - zero.workerHeap,
      },
      perDevice: {
        rss: slope("rss"),
        rssAfterGc: slope("rssGc"),
        mainHeap: slope("heap"),
        mainHeapTotal: slope("heapTotal"),
        mainExternal: slope("external"),
        workerHeap: slope("workerHeap"),
        workerExternal: slope("workerExternal"),
      },
      perDeviceFromZero: {
        rss: Math.round((last.rss - zero.rss) / n),
        rssAfterGc: Math.round((last.rssGc - zero.rssGc) / n),
      },
      rows,
    }),
  );
}

runBench(main, cleanUp, { timeoutMinutes: 20, log });
