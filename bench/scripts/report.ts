import { cell, markdownTable, ratioCell } from "../lib/table.ts";
import type { CallsResult } from "./handler-calls.ts";
import type { StepResult, TargetResult } from "./phases.ts";

const mib = (b: number) => b / 1024 / 1024;

/** Part 1: one row per way of calling the handler. */
function callsTable(calls: CallsResult): string {
  const base = calls.rates[0]?.callsPerSecond;
  return markdownTable(
    [
      "",
      "calls/s (median round)",
      "slowest – fastest round",
      "µs per call",
      "CPU (% of a core)",
      "÷ sandbox.deliver (default)",
    ],
    calls.rates.map((r) => [
      r.name,
      cell(r.callsPerSecond, 0),
      `${cell(r.minPerSecond, 0)} – ${cell(r.maxPerSecond, 0)}`,
      cell(r.usPerCall, 2),
      cell(r.cpuPercent, 0),
      ratioCell(r.callsPerSecond, base, 2),
    ]),
  );
}

/** Part 1: single calls with the process idle in between. */
function spacedTable(calls: CallsResult): string {
  return markdownTable(
    ["one call per 1 ms timer", "median (µs)", "p90 (µs)"],
    calls.spaced.map((s) => [s.name, cell(s.medianUs, 1), cell(s.p90Us, 1)]),
  );
}

/** Part 1: QuickJS memory per script instance. */
function memoryTable(calls: CallsResult): string {
  const m = calls.memory;
  const first = m.growth[0];
  return markdownTable(
    ["", ""],
    [
      ["sandbox.memoryBytes after load (MiB)", cell(mib(m.initialBytes), 2)],
      [`after attaching ${cell(m.firstDevices, 0)} devices (MiB)`, cell(mib(m.afterFirstBytes), 2)],
      ["first growth at (devices attached)", first ? cell(first.devices, 0) : "–"],
      [
        "growths (devices → MiB)",
        m.growth.map((g) => `${cell(g.devices, 0)} → ${cell(mib(g.bytes), 1)}`).join(", ") || "–",
      ],
      ["**memory per instance (bytes)**", cell(m.bytesPerInstance, 0)],
      [
        "used at load, estimated (MiB)",
        m.loadBytesEstimate === null ? "–" : cell(mib(m.loadBytesEstimate), 2),
      ],
      ["attach() (µs)", cell(m.usPerAttach, 1)],
    ],
  );
}

function stepCells(s: StepResult | undefined): string[] {
  if (!s) return ["skipped", "", "", "", "", "", "", "", "", "", "", "", "", ""];
  return [
    cell(s.achievedPerSecond, 0),
    cell(s.latency.p50Ms, 2),
    cell(s.latency.p99Ms, 2),
    // (results recorded before it was measured have no steady figure)
    s.latencySteady ? cell(s.latencySteady.p99Ms, 2) : "–",
    cell(s.latency.maxMs, 1),
    `${cell(s.measured - s.received, 0)} / ${cell(s.measured, 0)}`,
    s.stored === null || s.stored === undefined ? "–" : `${cell(s.stored, 0)} / ${cell(s.sent, 0)}`,
    cell(s.cpu.serverPercent, 0),
    cell(s.cpu.serverLoopBusy * 100, 0),
    s.http ? `${cell(s.http.health.latency.p99Ms, 2)} / ${cell(s.http.state.latency.p99Ms, 2)}` : "–",
    cell(mib(s.serverRssBytes), 0),
    s.serverPeakRssBytes === undefined ? "–" : cell(mib(s.serverPeakRssBytes), 0),
    cell(s.cpu.generatorPercent, 0),
    `${cell(s.cpu.otherPercent, 0)} / ${cell(s.cpu.stealPercent, 0)}`,
  ];
}

/**
 * Part 2: per fleet size and offered rate, a row per server and their ratio (sdk / reference) for
 * throughput, latency and server CPU.
 */
function e2eTable(results: readonly TargetResult[]): string {
  const sdk = results.find((r) => r.target === "sdk");
  const reference = results.find((r) => r.target === "reference");
  const rows: string[][] = [];
  const fleets = [...new Set(results.flatMap((r) => r.fleets.map((f) => f.devices)))];
  const rates = [
    ...new Set(
      results.flatMap((r) =>
        r.fleets.flatMap((f) => [...f.steps.map((s) => s.offeredPerSecond), ...f.skippedRates]),
      ),
    ),
  ];
  for (const n of fleets) {
    for (const rate of rates) {
      const step = (r: TargetResult | undefined) =>
        r?.fleets.find((f) => f.devices === n)?.steps.find((s) => s.offeredPerSecond === rate);
      const label = `${cell(n, 0)} devices, ${cell(rate, 0)}/s`;
      for (const r of results) rows.push([label, r.target, ...stepCells(step(r))]);
      const a = step(sdk);
      const b = step(reference);
      if (a && b) {
        rows.push([
          label,
          "sdk / reference",
          ratioCell(a.achievedPerSecond, b.achievedPerSecond, 2),
          ratioCell(a.latency.p50Ms, b.latency.p50Ms),
          ratioCell(a.latency.p99Ms, b.latency.p99Ms),
          a.latencySteady && b.latencySteady ? ratioCell(a.latencySteady.p99Ms, b.latencySteady.p99Ms) : "",
          ratioCell(a.latency.maxMs, b.latency.maxMs),
          "",
          "",
          ratioCell(a.cpu.serverPercent, b.cpu.serverPercent),
          "",
          "",
          ratioCell(a.serverRssBytes, b.serverRssBytes),
          "",
          "",
          "",
        ]);
      }
    }
  }
  return markdownTable(
    [
      "Devices, offered",
      "server",
      "through (msg/s)",
      "p50 (ms)",
      "p99 (ms)",
      "p99 after the first second (ms)",
      "max (ms)",
      "late or lost / timed",
      "stored / sent",
      "server CPU (%)",
      "server loop busy (%)",
      "p99 of /health / of a state read during the step (ms)",
      "server RSS (MiB)",
      "peak RSS (MiB)",
      "generator CPU (%)",
      "others / steal (% of a core)",
    ],
    rows,
  );
}

/**
 * The overload step of each fleet (and the recovery step after it): what came through, what was
 * stored, the most memory the server used, and how long it took to be idle again.
 */
function overloadTable(results: readonly TargetResult[]): string | null {
  const rows: string[][] = [];
  for (const r of results) {
    for (const f of r.fleets) {
      if (!f.overload) continue;
      const { step: s, recovery: q } = f.overload;
      rows.push([
        `${cell(f.devices, 0)} devices`,
        r.target,
        cell(s.offeredPerSecond, 0),
        cell(s.achievedPerSecond, 0),
        cell(s.latency.p99Ms, 1),
        `${cell(s.measured - s.received, 0)} / ${cell(s.measured, 0)}`,
        s.stored === null ? "–" : `${cell(s.stored, 0)} / ${cell(s.sent, 0)}`,
        cell(mib(s.serverPeakRssBytes), 0),
        cell(mib(s.serverRssBytes), 0),
        s.settleMs === null ? "> 30 s" : cell(s.settleMs, 0),
        `${cell(q.offeredPerSecond, 0)}/s: p99 ${cell(q.latency.p99Ms, 2)} ms, ${cell(q.measured - q.received, 0)} missing`,
        cell(s.cpu.serverPercent, 0),
        cell(s.cpu.generatorPercent, 0),
      ]);
    }
  }
  if (rows.length === 0) return null;
  return markdownTable(
    [
      "Overload",
      "server",
      "offered (msg/s)",
      "through (msg/s)",
      "p99 (ms)",
      "late or lost / timed",
      "stored / sent",
      "peak RSS (MiB)",
      "RSS after (MiB)",
      "idle again after (ms)",
      "then, at a tenth",
      "server CPU (%)",
      "generator CPU (%)",
    ],
    rows,
  );
}

/** A difference with its sign (`+1.20`, `−0.30`), or – when it cannot be computed. */
const signed = (value: number, digits: number) =>
  Number.isFinite(value) ? `${value < 0 ? "−" : "+"}${cell(Math.abs(value), digits)}` : "–";

/** CPU of every process of a step, % of one core: the instances, NATS, PostgreSQL, the generator. */
function processCpu(s: StepResult): { sdk: number; cells: string } {
  const others = s.services ?? [];
  const instances = others.filter((p) => p.loopBusy !== null);
  const sdk = s.cpu.serverPercent + instances.reduce((sum, p) => sum + p.percent, 0);
  const parts = [
    `A ${cell(s.cpu.serverPercent, 0)} (loop ${cell(s.cpu.serverLoopBusy * 100, 0)})`,
    ...instances.map(
      (p) =>
        `${p.name.replace(/^sdk instance /, "")} ${cell(p.percent, 0)} (loop ${cell((p.loopBusy ?? 0) * 100, 0)})`,
    ),
    ...others.filter((p) => p.loopBusy === null).map((p) => `${p.name} ${cell(p.percent, 0)}`),
    `generator ${cell(s.cpu.generatorPercent, 0)}`,
  ];
  return { sdk, cells: parts.join(", ") };
}

/**
 * `--instances`: one sdk instance on PostgreSQL against a cluster (devices on A, watchers on the
 * last instance), and the difference: what the bus adds per message. On a 2-core machine both
 * instances, NATS, PostgreSQL and the generator share the cores: this is overhead, not speed-up.
 */
function clusterTable(results: readonly TargetResult[]): string | null {
  const one = results.find((r) => r.target === "sdk-pg");
  const many = results.find((r) => r.target.startsWith("sdk-pg-x"));
  if (!one || !many) return null;
  const rows: string[][] = [];
  for (const f of one.fleets) {
    for (const a of f.steps) {
      const b = many.fleets
        .find((g) => g.devices === f.devices)
        ?.steps.find((s) => s.offeredPerSecond === a.offeredPerSecond);
      const label = `${cell(f.devices, 0)} devices, ${cell(a.offeredPerSecond, 0)}/s`;
      const row = (name: string, s: StepResult) => {
        const cpu = processCpu(s);
        return [
          label,
          name,
          cell(s.achievedPerSecond, 0),
          cell(s.latency.p50Ms, 2),
          cell(s.latency.p99Ms, 2),
          `${cell(s.measured - s.received, 0)} / ${cell(s.measured, 0)}`,
          s.stored === null ? "–" : `${cell(s.stored, 0)} / ${cell(s.sent, 0)}`,
          cell(cpu.sdk, 0),
          s.achievedPerSecond > 0 ? cell((cpu.sdk / 100 / s.achievedPerSecond) * 1e6, 0) : "–",
          cpu.cells,
        ];
      };
      rows.push(row(one.target, a));
      if (!b) continue;
      rows.push(row(many.target, b));
      const perMessage = (s: StepResult) =>
        s.achievedPerSecond > 0 ? (processCpu(s).sdk / 100 / s.achievedPerSecond) * 1e6 : Number.NaN;
      rows.push([
        label,
        "**bus overhead** (cluster − one)",
        ratioCell(b.achievedPerSecond, a.achievedPerSecond, 2),
        signed(b.latency.p50Ms - a.latency.p50Ms, 2),
        signed(b.latency.p99Ms - a.latency.p99Ms, 2),
        "",
        "",
        signed(processCpu(b).sdk - processCpu(a).sdk, 0),
        signed(perMessage(b) - perMessage(a), 0),
        "",
      ]);
    }
  }
  return markdownTable(
    [
      "Devices, offered",
      "server",
      "through (msg/s)",
      "p50 (ms)",
      "p99 (ms)",
      "late or lost / timed",
      "stored / sent",
      "sdk CPU, all instances (%)",
      "sdk CPU per message (µs)",
      "CPU by process (% of a core; loop busy %)",
    ],
    rows,
  );
}

export function report(record: { calls: CallsResult | null; e2e: TargetResult[] }): string {
  const parts: string[] = [];
  if (record.calls)
    parts.push(callsTable(record.calls), spacedTable(record.calls), memoryTable(record.calls));
  if (record.e2e.length > 0) parts.push(e2eTable(record.e2e));
  const overload = overloadTable(record.e2e);
  if (overload) parts.push(overload);
  const cluster = clusterTable(record.e2e);
  if (cluster) parts.push(cluster);
  return parts.join("\n\n");
}
