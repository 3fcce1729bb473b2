/**
 * Connection benchmark: N simulated devices against the real sdk server, then against a plain `ws`
 * server (the reference), with memory, connect rate, idle heartbeat CPU and a reconnect storm.
 *
 *   node bench/connections/run.ts [--devices 10000] [--only sdk|reference] [--help]
 *
 * Prints progress and a Markdown table; writes bench/results/connections-<date>-n<N>.json.
 * `--server-ref HEAD` measures a commit (exported to a temporary directory) instead of the
 * working tree, which may be changing under the run.
 * 10,000 devices need an open-files limit above 11,024 (`ulimit -n`): the server and the
 * generator each hold one socket per device.
 */
import os from "node:os";
import path from "node:path";
import { resultsFile, writeResults } from "../lib/json.ts";
import { machineInfo, openFilesLimit } from "../lib/proc.ts";
import { progressLog, runBench } from "../lib/run.ts";
import { exportRef, type ServerSource, workingTree } from "../lib/server-source.ts";
import { startTarget, type Target } from "../lib/targets.ts";
import type { Generator } from "./generator.ts";
import { parseOptions } from "./options.ts";
import { benchTarget, type TargetResult } from "./phases.ts";
import { table } from "./report.ts";

/** The servers ping every 5 s, so that the idle window holds several heartbeat rounds. */
const heartbeatSeconds = 5;

const options = parseOptions(process.argv.slice(2));
const log = progressLog();

const live = {
  targets: new Set<Target>(),
  generators: new Set<Generator>(),
  source: undefined as ServerSource | undefined,
};

/** Ends every process this run started (only those) and removes their temporary directories. */
async function cleanUp(): Promise<void> {
  await Promise.allSettled([...live.generators].map((g) => g.stop()));
  await Promise.allSettled([...live.targets].map((t) => t.dispose()));
  live.generators.clear();
  live.targets.clear();
}

/** cleanUp(), and removes the exported server code. */
async function cleanUpAll(): Promise<void> {
  await cleanUp();
  live.source?.dispose();
  live.source = undefined;
}

async function main(): Promise<void> {
  // Each server holds one socket per device, as does the generator (split over its workers).
  const needed = options.devices + 1024;
  if (openFilesLimit() < needed) {
    throw new Error(
      `the open-files limit (${openFilesLimit()}) is below ${needed}: run under ` +
        `bash -c 'ulimit -n ${Math.max(65_536, needed)}; node bench/connections/run.ts ...'`,
    );
  }
  const machine = machineInfo();
  log(
    `${options.devices} devices; ${machine.cpus} CPUs (${machine.cpuModel}), ${machine.memoryGiB} GiB, node ${machine.node}`,
  );
  const source = options.serverRef ? exportRef(options.serverRef) : workingTree();
  live.source = source;
  log(`sdk server: ${source.description}`);
  const loadAtStart = os.loadavg();
  const results: TargetResult[] = [];
  for (const name of options.targets) {
    const target = await startTarget(name, source, "bench/connections/reference-server.ts", {
      heartbeatSeconds,
      profileDir: options.profileDir,
    });
    live.targets.add(target);
    try {
      results.push(await benchTarget(target, options, log, (g) => live.generators.add(g)));
    } finally {
      await cleanUp();
    }
  }

  const markdown = table(results);
  process.stdout.write(`\n${markdown}\n\n`);
  const out =
    options.out ?? resultsFile(`connections-${new Date().toISOString().slice(0, 10)}-n${options.devices}`);
  const record = {
    date: new Date().toISOString(),
    argv: process.argv.slice(2),
    options,
    machine,
    server: { commit: source.commit, dirty: source.dirty, description: source.description },
    /** 1/5/15-minute load averages: the machine may be shared with other work. */
    loadAverage: { start: loadAtStart, end: os.loadavg() },
    results,
  };
  writeResults(out, record);
  log(`results written to ${path.relative(process.cwd(), out)}`);
}

runBench(main, cleanUpAll, { timeoutMinutes: options.timeoutMinutes, log });
