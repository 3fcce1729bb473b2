/**
 * Script benchmark. Part 1: handler calls per second through `@sdk/sandbox` (deadlines on), against
 * a plain JS call and a bare QuickJS call, and QuickJS memory per device instance. Part 2: device
 * message → script → emitState → watcher, end to end through the real sdk server at fixed offered
 * rates, then the same through a plain `ws` relay (the reference).
 *
 *   node bench/scripts/run.ts [--devices 100,1000] [--rates 1000,5000,10000] [--seconds 10] [--help]
 *
 * `--instances 2`: part 2 runs the sdk on PostgreSQL as one instance, then as a cluster of two on
 * PostgreSQL and NATS (devices on A, watchers on B), instead of the sdk on SQLite and the reference.
 *
 * Prints progress and Markdown tables; writes bench/results/scripts-<date>.json.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { slowFsyncEnv } from "@sdk/test-helpers";
import type { Child } from "../lib/child.ts";
import { PostgresTarget } from "../lib/cluster-target.ts";
import { resultsFile, writeResults } from "../lib/json.ts";
import { waitQuiet } from "../lib/measure.ts";
import { machineInfo, openFilesLimit, otherBenchmarks } from "../lib/proc.ts";
import { progressLog, runBench, waitForOtherBenchmarks } from "../lib/run.ts";
import { exportRef, type ServerSource, workingTree } from "../lib/server-source.ts";
import { startTarget, type Target } from "../lib/targets.ts";
import { measureCalls } from "./calls.ts";
import type { LoadGenerator } from "./generator.ts";
import type { CallsResult } from "./handler-calls.ts";
import { parseOptions } from "./options.ts";
import { benchTarget, type TargetResult } from "./phases.ts";
import { buildScript, counterScript, tickScript } from "./project.ts";
import { report } from "./report.ts";

/** Devices ping every minute: heartbeats stay out of the figures. */
const heartbeatSeconds = 60;

const options = parseOptions(process.argv.slice(2));
const profileFlags = (dir: string | undefined) =>
  dir ? ["--cpu-prof", `--cpu-prof-dir=${path.resolve(dir)}`] : [];
const storedHistoryPerDevice = 5000;
const log = progressLog();
/** Other benchmark runs seen: before starting (after waiting for them), and later. */
const others = { atStart: [] as string[], during: [] as string[] };

/** Notes (and warns of) any other benchmark run that started since. */
function checkOthers(): void {
  for (const other of otherBenchmarks()) {
    if (others.atStart.includes(other) || others.during.includes(other)) continue;
    others.during.push(other);
    log(`warning: another benchmark started (${other}); the figures from now on are suspect`);
  }
}

const live = {
  children: new Set<Child>(),
  targets: new Set<Target>(),
  generators: new Set<LoadGenerator>(),
  source: undefined as ServerSource | undefined,
};

/** Ends every process this run started (only those) and removes their temporary directories. */
async function cleanUp(): Promise<void> {
  await Promise.allSettled([...live.generators].map((g) => g.stop()));
  await Promise.allSettled([...live.targets].map((t) => t.dispose()));
  await Promise.allSettled([...live.children].map((c) => c.stop("SIGTERM", 5_000)));
  live.generators.clear();
  live.targets.clear();
  live.children.clear();
}

/** cleanUp(), and removes the exported server code (`--server-ref`). */
async function cleanUpAll(): Promise<void> {
  await cleanUp();
  live.source?.dispose();
  live.source = undefined;
}

async function main(): Promise<void> {
  // The server and the generator each hold a device socket and a watch socket per device.
  const needed = 2 * Math.max(...options.devices) + 1024;
  // The state history keeps a step's values (up to 5,000 per device), so the run can count what was
  // stored. The server reads it from its environment.
  process.env.STATE_HISTORY_MAX_ENTRIES = String(storedHistoryPerDevice);
  if (options.e2e && openFilesLimit() < needed) {
    throw new Error(`the open-files limit (${openFilesLimit()}) is below ${needed}: raise it with ulimit -n`);
  }
  const machine = machineInfo();
  log(`${machine.cpus} CPUs (${machine.cpuModel}), ${machine.memoryGiB} GiB, node ${machine.node}`);
  const source = options.serverRef ? exportRef(options.serverRef) : workingTree();
  live.source = source;
  log(`sdk server: ${source.description}`);
  let serverEnv: Record<string, string> | undefined;
  if (options.fsyncDelayMs > 0) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "sdk-bench-fsync-"));
    process.once("exit", () => fs.rmSync(dir, { recursive: true, force: true }));
    serverEnv = slowFsyncEnv(dir, options.fsyncDelayMs);
    log(`  a slow disk: each fsync of the sdk server takes ${options.fsyncDelayMs} ms more (LD_PRELOAD)`);
  }
  const loadAtStart = os.loadavg();

  log("building the bench scripts with @sdk/build");
  const counter = await buildScript(counterScript);
  const tick = await buildScript(tickScript);

  let calls: CallsResult | null = null;
  let quietBeforeCalls: { waitedMs: number; otherPercent: number } | null = null;
  if (options.calls) {
    log(`part 1: handler calls, ${options.callSeconds} s per variant`);
    checkOthers();
    quietBeforeCalls = await waitQuiet([process.pid], 60_000);
    if (quietBeforeCalls.waitedMs > 0) {
      log(`  waited ${quietBeforeCalls.waitedMs} ms for other work on the machine to stop`);
    }
    calls = await measureCalls(counter, tick, options.callSeconds, (c) => live.children.add(c));
    for (const r of calls.rates) log(`  ${r.name}: ${r.callsPerSecond.toLocaleString("en-US")} calls/s`);
    log(`  memory per instance: ${calls.memory.bytesPerInstance ?? "?"} bytes`);
  }

  const e2e: TargetResult[] = [];
  if (options.e2e) {
    log(
      `part 2: ${options.devices.join(", ")} devices at ${options.rates.join(", ")} msg/s, ${options.seconds} s each`,
    );
    const overloadRates = new Map<number, number>();
    for (const name of options.targets) {
      checkOthers();
      const target =
        name === "sdk-pg" || name === "sdk-cluster"
          ? await PostgresTarget.create(
              source,
              { heartbeatSeconds, nodeFlags: profileFlags(options.profileDir) },
              {
                instances: name === "sdk-pg" ? 1 : options.instances,
                databaseUrl: options.databaseUrl,
                natsUrl: options.natsUrl,
              },
            )
          : await startTarget(name, source, "bench/scripts/reference-server.ts", {
              heartbeatSeconds,
              profileDir: options.profileDir,
              env: serverEnv,
            });
      live.targets.add(target);
      try {
        e2e.push(await benchTarget(target, tick, options, log, (g) => live.generators.add(g), overloadRates));
      } finally {
        await cleanUp();
      }
    }
  }

  checkOthers();
  const record = {
    date: new Date().toISOString(),
    argv: process.argv.slice(2),
    options,
    machine,
    server: { commit: source.commit, dirty: source.dirty, description: source.description },
    /** 1/5/15-minute load averages: the machine may be shared with other work. */
    loadAverage: { start: loadAtStart, end: os.loadavg() },
    otherBenchmarks: others,
    /** Part 1: how long it waited for other work on the machine to stop, and what that used then. */
    quietBeforeCalls,
    calls,
    e2e,
  };
  process.stdout.write(`\n${report(record)}\n\n`);
  const out = options.out ?? resultsFile(`scripts-${record.date.slice(0, 10)}`);
  writeResults(out, record);
  log(`results written to ${path.relative(process.cwd(), out)}`);
}

// Two benchmarks at once would distort each other: wait (at most 20 min) for any other to end.
if (!options.noWait) others.atStart = await waitForOtherBenchmarks(log);
runBench(main, cleanUpAll, { timeoutMinutes: options.timeoutMinutes, log });
