/**
 * Soak benchmark: disk use under a simulated day. 1,000 devices (by default) each log a line every
 * 2 minutes and report 2 state entities every 5 minutes (a sensor board) — 720 log lines and 576
 * history values per device per day — with simulated time, so a day takes minutes. Writes go
 * through the real server's services (group commit, write-path pruning) into a real SQLite file;
 * every simulated hour the sweeper's retention pass starts, as it does hourly in a server, and runs
 * while the next minutes' writes go on (it is not awaited before them).
 *
 * Half the devices are in a project that keeps 300 log lines per device (reached after 10 h) and
 * 100 values per entity (reached after 8 h 20 min); the other half in one that keeps a day (age
 * rules of 1 day for logs and history, counts out of reach), which starts removing after hour 24.
 * The database must level off for the rest of the run. The reference is the same run with
 * retention off (nothing swept, write-path limits at their maximum): its size keeps growing.
 *
 * "Without stalling writes": while a sweep runs, the event loop's delay (perf_hooks
 * monitorEventLoopDelay; the server runs in this process) and the latency of each write issued
 * meanwhile (from the call to its commit) are recorded, next to the same figures outside sweeps.
 *
 *   node bench/soak/run.ts [--devices 1000] [--hours 30] [--no-reference] [--help]
 *
 * Prints the size every simulated hour and a summary; writes bench/results/soak-<date>.json.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { createServer, type Server } from "@sdk/server/app";
import { loadConfig } from "@sdk/server/config";
import { resultsFile, writeResults } from "../lib/json.ts";
import { positive } from "../lib/options.ts";
import { machineInfo } from "../lib/proc.ts";
import { progressLog, runBench } from "../lib/run.ts";
import { workingTree } from "../lib/server-source.ts";

const usage = "usage: node bench/soak/run.ts [--devices 1000] [--hours 30] [--no-reference]";
const logEveryMinutes = 2;
const stateEveryMinutes = 5;
const entities = ["temperature", "humidity"];
const kept = { logMaxEntries: 300, stateHistoryMaxEntries: 100 };
/** The second project: by age only (its counts are above what a day and a half writes). */
const keptByAge = { logMaxAgeDays: 1, stateHistoryMaxAgeDays: 1 };
const ms = (ns: number) => +(ns / 1e6).toFixed(1);

/** Latencies in ms: count, median, 99th percentile and maximum. */
function latencies(values: number[]) {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) =>
    +(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0).toFixed(1);
  return { count: sorted.length, p50Ms: at(0.5), p99Ms: at(0.99), maxMs: +(sorted.at(-1) ?? 0).toFixed(1) };
}

function parseOptions(argv: string[]) {
  const value = (name: string) => {
    const i = argv.indexOf(`--${name}`);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  if (argv.includes("--help")) {
    process.stdout.write(`${usage}\n`);
    process.exit(0);
  }
  return {
    devices: positive("devices", value("devices"), 1000, usage),
    hours: positive("hours", value("hours"), 30, usage),
    reference: !argv.includes("--no-reference"),
  };
}

const options = parseOptions(process.argv.slice(2));
const log = progressLog();
const dirs: string[] = [];
let live: Server | undefined;

interface Sample {
  hour: number;
  /** The SQLite file (sdk.db) as the filesystem sees it, and its write-ahead log. */
  fileBytes: number;
  walBytes: number;
  logRows: number;
  historyRows: number;
}

async function sample(server: Server, hour: number): Promise<Sample> {
  const file = path.join(server.config.dataDir, "sdk.db");
  const count = async (table: "deviceLogs" | "deviceStateHistory") =>
    Number(
      (
        await server.database.db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll().as("n"))
          .executeTakeFirstOrThrow()
      ).n,
    );
  const wal = `${file}-wal`;
  return {
    hour,
    fileBytes: fs.statSync(file).size,
    walBytes: fs.existsSync(wal) ? fs.statSync(wal).size : 0,
    logRows: await count("deviceLogs"),
    historyRows: await count("deviceStateHistory"),
  };
}

async function soak(retention: boolean) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "sdk-soak-"));
  dirs.push(dataDir);
  let now = Date.UTC(2026, 0, 1);
  const clock = { now: () => now };
  const config = loadConfig({
    PORT: "0",
    HOST: "127.0.0.1",
    DATA_DIR: dataDir,
    LOG_LEVEL: "warn",
    LOG_FORMAT: "json",
    MDNS: "false",
    // Off: the write path's own trimming at its widest, and nothing swept.
    ...(retention
      ? { DEVICE_LOG_MAX_ENTRIES: "5000", STATE_HISTORY_MAX_ENTRIES: "5000" }
      : { DEVICE_LOG_MAX_ENTRIES: "1000000", STATE_HISTORY_MAX_ENTRIES: "100000" }),
  });
  const server = await createServer({ config, clock });
  live = server;
  await server.listen();
  const { services } = server;
  await services.auth.register({ email: "soak@example.com", password: "correct horse battery" }, "127.0.0.1");
  const user = await server.database.db.selectFrom("users").selectAll().executeTakeFirstOrThrow();
  const principal = { user, via: "token" as const, credentialId: "soak" };
  const byCount = await services.projects.create(principal, "Soak (counts)");
  const byAge = await services.projects.create(principal, "Soak (a day)");
  if (retention) {
    await services.retention.set(principal, byCount.id, kept);
    await services.retention.set(principal, byAge.id, keptByAge);
  }
  const devices = [];
  for (let i = 0; i < options.devices; i++) {
    const projectId = i % 2 === 0 ? byCount.id : byAge.id;
    const created = await services.devices.create(principal, projectId, {
      name: `board ${i}`,
      board: "pico_w",
    });
    devices.push({ projectId, deviceId: created.device.id });
  }
  log(
    `${retention ? "retention on" : "reference (retention off)"}: ${options.devices} devices, ${options.hours} h`,
  );
  const samples: Sample[] = [await sample(server, 0)];
  const started = Date.now();
  let sweepMs = 0;
  let writes = 0;
  let sweeping: Promise<void> | undefined;
  const sweeps: { hour: number; seconds: number; loopDelayMaxMs: number; loopDelayP99Ms: number }[] = [];
  const loopAll = monitorEventLoopDelay({ resolution: 5 });
  const writeMs = { inSweep: [] as number[], outside: [] as number[] };
  loopAll.enable();
  const timed = (write: Promise<void>) => {
    const t = performance.now();
    const list = sweeping ? writeMs.inSweep : writeMs.outside;
    return write.then(() => {
      list.push(performance.now() - t);
    });
  };
  for (let minute = 1; minute <= options.hours * 60; minute++) {
    now += 60_000;
    const pending: Promise<void>[] = [];
    const push = (write: Promise<void>) => pending.push(timed(write));
    devices.forEach((device, i) => {
      // Spread over the minutes: each device has its own phase.
      if ((minute + i) % logEveryMinutes === 0)
        push(
          services.deviceLogs.append(
            device,
            "info",
            "device",
            `reading ok, uptime ${minute} min, rssi -6${i % 10} dBm`,
          ),
        );
      if ((minute + i) % stateEveryMinutes === 0)
        for (const entity of entities)
          push(services.deviceState.record(device, entity, Math.round(Math.random() * 1000) / 10));
    });
    writes += pending.length;
    await Promise.all(pending);
    if (minute % 60 === 0) {
      await sweeping; // the previous hour's sweep, which ran alongside this hour's writes
      const s = await sample(server, minute / 60);
      samples.push(s);
      log(
        `  hour ${String(s.hour).padStart(2)}: file ${(s.fileBytes / 1048576).toFixed(1).padStart(6)} MB, wal ${(s.walBytes / 1048576).toFixed(1)} MB, ${s.logRows} log rows, ${s.historyRows} history rows${sweeps.at(-1) ? `; last sweep ${sweeps.at(-1)?.seconds} s, loop delay max ${sweeps.at(-1)?.loopDelayMaxMs} ms` : ""}`,
      );
      if (retention) {
        const hour = minute / 60;
        const t = performance.now();
        const loop = monitorEventLoopDelay({ resolution: 5 });
        loop.enable();
        sweeping = services.retention.sweep().then(() => {
          loop.disable();
          const seconds = (performance.now() - t) / 1000;
          sweepMs += seconds * 1000;
          sweeps.push({
            hour,
            seconds: +seconds.toFixed(2),
            loopDelayMaxMs: ms(loop.max),
            loopDelayP99Ms: ms(loop.percentile(99)),
          });
          sweeping = undefined;
        });
      }
    }
  }
  await sweeping;
  loopAll.disable();
  const wallSeconds = (Date.now() - started) / 1000;
  await server.close();
  live = undefined;
  const loopDelay = (h: { count: number; max: number; percentile(p: number): number }) =>
    h.count === 0 ? null : { p50Ms: ms(h.percentile(50)), p99Ms: ms(h.percentile(99)), maxMs: ms(h.max) };
  return {
    retention,
    samples,
    writes,
    wallSeconds,
    sweepSeconds: +(sweepMs / 1000).toFixed(2),
    sweeps,
    loopDelay: {
      wholeRun: loopDelay(loopAll),
      // The worst sweep's figures (each sweep has its own histogram).
      duringSweeps:
        sweeps.length === 0
          ? null
          : {
              p99Ms: Math.max(...sweeps.map((s) => s.loopDelayP99Ms)),
              maxMs: Math.max(...sweeps.map((s) => s.loopDelayMaxMs)),
            },
    },
    writeLatency: { duringSweeps: latencies(writeMs.inSweep), outsideSweeps: latencies(writeMs.outside) },
  };
}

async function main(): Promise<void> {
  const machine = machineInfo();
  log(`${machine.cpus} CPUs (${machine.cpuModel}), ${machine.memoryGiB} GiB, node ${machine.node}`);
  const source = workingTree();
  const loadAtStart = os.loadavg();
  const runs = [await soak(true)];
  if (options.reference) runs.push(await soak(false));
  const summary = runs.map((r) => {
    const last = r.samples.at(-1)!;
    const mid = r.samples[Math.floor(r.samples.length / 2)]!;
    return {
      run: r.retention ? "retention on" : "reference (off)",
      writes: r.writes,
      writesPerSecond: Math.round(r.writes / r.wallSeconds),
      finalMB: +(last.fileBytes / 1048576).toFixed(1),
      midDayMB: +(mid.fileBytes / 1048576).toFixed(1),
      peakMB: +(Math.max(...r.samples.map((s) => s.fileBytes)) / 1048576).toFixed(1),
      finalRows: last.logRows + last.historyRows,
      sweepSeconds: r.sweepSeconds,
      loopDelayInSweepsMaxMs: r.loopDelay.duringSweeps?.maxMs ?? null,
      loopDelayWholeRunMaxMs: r.loopDelay.wholeRun?.maxMs ?? null,
      writeP99InSweepsMs: r.writeLatency.duringSweeps.count > 0 ? r.writeLatency.duringSweeps.p99Ms : null,
      writeP99OutsideMs: r.writeLatency.outsideSweeps.p99Ms,
    };
  });
  process.stdout.write(
    "\n| run | writes | writes/s | mid-run MB | peak MB | final MB | rows at end | sweep s | loop delay max in sweeps / whole run ms | write p99 in sweeps / outside ms |\n",
  );
  process.stdout.write("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
  for (const s of summary)
    process.stdout.write(
      `| ${s.run} | ${s.writes} | ${s.writesPerSecond} | ${s.midDayMB} | ${s.peakMB} | ${s.finalMB} | ${s.finalRows} | ${s.sweepSeconds} | ${s.loopDelayInSweepsMaxMs ?? "–"} / ${s.loopDelayWholeRunMaxMs} | ${s.writeP99InSweepsMs ?? "–"} / ${s.writeP99OutsideMs} |\n`,
    );
  const file = resultsFile(`soak-${new Date().toISOString().slice(0, 10)}-n${options.devices}`);
  writeResults(file, {
    date: new Date().toISOString(),
    argv: process.argv.slice(2),
    options,
    rates: { logEveryMinutes, stateEveryMinutes, entities, kept, keptByAge },
    machine,
    server: { commit: source.commit, dirty: source.dirty, description: source.description },
    loadAverage: { start: loadAtStart, end: os.loadavg() },
    summary,
    runs,
  });
  log(`wrote ${path.relative(process.cwd(), file)}`);
}

runBench(
  main,
  async () => {
    await live?.close().catch(() => {});
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  },
  { timeoutMinutes: 60, log },
);
