import type { Cpu } from "../lib/measure.ts";
import { cell, markdownTable, ratioCell } from "../lib/table.ts";
import type { TargetResult } from "./phases.ts";

interface Row {
  label: string;
  value: (r: TargetResult) => number | null;
  digits: number;
}

const mib = (b: number) => b / 1024 / 1024;
/** Per-device figures in kB (1,000 bytes), the unit of the design target (≤ 20 KB per device). */
const kb = (b: number) => b / 1000;
const s = (ms: number) => ms / 1000;

/** Storm errors the generator saw whose message contains `text`. */
function errorCount(r: TargetResult, key: "storm" | "kill", text: string): number {
  return Object.entries(r[key].errors)
    .filter(([message]) => message.includes(text))
    .reduce((sum, [, n]) => sum + n, 0);
}

/** The rows of one restart phase (`storm`: SIGTERM, graceful; `kill`: SIGKILL). */
function restartRows(key: "storm" | "kill", name: string): Row[] {
  return [
    { label: `${name}: signal → old process gone (s)`, value: (r) => s(r[key].stopMs), digits: 2 },
    { label: `${name}: signal → new process accepting (s)`, value: (r) => s(r[key].downMs), digits: 2 },
    { label: `${name}: accepting → 50 % online (s)`, value: (r) => s(r[key].fromReady.p50Ms), digits: 2 },
    { label: `${name}: accepting → 99 % online (s)`, value: (r) => s(r[key].fromReady.p99Ms), digits: 2 },
    { label: `**${name}: accepting → all online (s)**`, value: (r) => s(r[key].fromReady.allMs), digits: 2 },
    { label: `${name}: signal → all online (s)`, value: (r) => s(r[key].fromSigtermMs), digits: 2 },
    {
      label: `${name}: accepting → last successful dial (s)`,
      value: (r) => s(r[key].lastDialFromReadyMs),
      digits: 2,
    },
    { label: `${name}: dial → welcome p50 (ms)`, value: (r) => r[key].handshake.p50Ms, digits: 0 },
    { label: `${name}: dial → welcome p99 (ms)`, value: (r) => r[key].handshake.p99Ms, digits: 0 },
    { label: `${name}: dial → welcome max (ms)`, value: (r) => r[key].handshake.maxMs, digits: 0 },
    {
      label: `${name}: SYNs dropped, accept queue full`,
      value: (r) => r[key].tcp.listenOverflows,
      digits: 0,
    },
    {
      label: `${name}: dials refused (no server yet)`,
      value: (r) => errorCount(r, key, "ECONNREFUSED"),
      digits: 0,
    },
    {
      label: `${name}: handshakes the device gave up on (10 s)`,
      value: (r) => errorCount(r, key, "handshake has timed out"),
      digits: 0,
    },
    { label: `${name}: dial attempts`, value: (r) => r[key].attempts, digits: 0 },
    { label: `${name}: server CPU (% of a core)`, value: (r) => r[key].cpu.serverPercent, digits: 0 },
    {
      label: `${name}: server event loop busy (%)`,
      value: (r) => r[key].cpu.serverLoopBusy * 100,
      digits: 0,
    },
    {
      label: `${name}: server main thread on a CPU (%)`,
      value: (r) => r[key].cpu.serverMainOnCpu * 100,
      digits: 0,
    },
    {
      label: `${name}: server main thread waiting for a CPU (%)`,
      value: (r) => r[key].cpu.serverMainWaitingForCpu * 100,
      digits: 0,
    },
    { label: `${name}: generator CPU (% of a core)`, value: (r) => r[key].cpu.generatorPercent, digits: 0 },
    ...writeRows(name, (r) => r[key].cpu),
    {
      label: `${name}: REST API counts all online (s after accepting)`,
      value: (r) => (r[key].restAllOnlineFromReadyMs === null ? null : s(r[key].restAllOnlineFromReadyMs)),
      digits: 2,
    },
  ];
}

/** What the server wrote in a phase: counts, steadier than its times on a shared machine. */
function writeRows(name: string, cpu: (r: TargetResult) => Cpu): Row[] {
  const known = (n: number) => (Number.isFinite(n) ? n : null);
  return [
    {
      label: `${name}: server wrote (MB: database, logs, sockets)`,
      value: (r) => known(cpu(r).serverWrittenBytes / 1e6),
      digits: 1,
    },
    { label: `${name}: server write calls`, value: (r) => known(cpu(r).serverWriteCalls), digits: 0 },
  ];
}

const rows: Row[] = [
  {
    label: "Script deployed (1: one instance per device; `--no-script`: 0)",
    value: (r) => (r.target !== "sdk" || r.deployment === undefined ? null : r.deployment ? 1 : 0),
    digits: 0,
  },
  { label: "RSS after boot (MiB)", value: (r) => mib(r.memory.before.rssBytes), digits: 1 },
  { label: "RSS all online (MiB)", value: (r) => mib(r.memory.online.rssBytes), digits: 1 },
  { label: "**RSS per device (kB)**", value: (r) => kb(r.memory.rssPerDeviceBytes), digits: 1 },
  {
    label: "RSS per device after forced GC (kB)",
    value: (r) => kb(r.memory.rssPerDeviceAfterGcBytes),
    digits: 1,
  },
  { label: "Heap used after boot (MiB)", value: (r) => mib(r.memory.before.heapUsedBytes), digits: 1 },
  { label: "Heap used all online (MiB)", value: (r) => mib(r.memory.online.heapUsedBytes), digits: 1 },
  { label: "Heap per device (kB)", value: (r) => kb(r.memory.heapPerDeviceBytes), digits: 1 },
  {
    label: "Heap per device after forced GC (kB)",
    value: (r) => kb(r.memory.heapPerDeviceAfterGcBytes),
    digits: 1,
  },
  { label: "RSS after the restarts (MiB)", value: (r) => mib(r.memory.afterStorm.rssBytes), digits: 1 },
  { label: "**Connect: time to all online (s)**", value: (r) => s(r.connect.allMs), digits: 2 },
  { label: "**Connect rate (devices/s)**", value: (r) => r.connect.devicesPerSecond, digits: 0 },
  { label: "Connect: dial → welcome p50 (ms)", value: (r) => r.connect.handshake.p50Ms, digits: 0 },
  { label: "Connect: dial → welcome p99 (ms)", value: (r) => r.connect.handshake.p99Ms, digits: 0 },
  {
    label: "Connect: SYNs dropped, accept queue full",
    value: (r) => r.connect.tcp.listenOverflows,
    digits: 0,
  },
  { label: "Connect: server CPU (% of a core)", value: (r) => r.connect.serverPercent, digits: 0 },
  { label: "Connect: server event loop busy (%)", value: (r) => r.connect.serverLoopBusy * 100, digits: 0 },
  {
    label: "Connect: server main thread on a CPU (%)",
    value: (r) => r.connect.serverMainOnCpu * 100,
    digits: 0,
  },
  {
    label: "Connect: server main thread waiting for a CPU (%)",
    value: (r) => r.connect.serverMainWaitingForCpu * 100,
    digits: 0,
  },
  { label: "Connect: generator CPU (% of a core)", value: (r) => r.connect.generatorPercent, digits: 0 },
  ...writeRows("Connect", (r) => r.connect),
  { label: "**Idle: server CPU (% of a core)**", value: (r) => r.idle.serverPercent, digits: 2 },
  { label: "Idle: server event loop busy (%)", value: (r) => r.idle.serverLoopBusy * 100, digits: 2 },
  { label: "Idle: server CPU per 1,000 devices (%)", value: (r) => r.idle.serverPercentPer1000, digits: 3 },
  { label: "Idle: generator CPU (% of a core)", value: (r) => r.idle.generatorPercent, digits: 2 },
  ...restartRows("storm", "Restart (SIGTERM → 1012)"),
  ...restartRows("kill", "Kill -9"),
  { label: "Generator RSS (MiB)", value: (r) => mib(r.generator.rssBytes), digits: 1 },
  { label: "Generator CPU, whole run (s)", value: (r) => s(r.generator.cpuMs), digits: 1 },
];

/** A Markdown table: one column per target, and sdk/reference when both ran. */
export function table(results: readonly TargetResult[]): string {
  const sdk = results.find((r) => r.target === "sdk");
  const reference = results.find((r) => r.target === "reference");
  const headers = ["", ...results.map((r) => `${r.target} (${r.devices.toLocaleString("en-US")})`)];
  if (sdk && reference) headers.push("sdk / reference");
  return markdownTable(
    headers,
    rows.map((row) => {
      const cells = [row.label, ...results.map((r) => cell(row.value(r), row.digits))];
      if (sdk && reference) cells.push(ratioCell(row.value(sdk), row.value(reference)));
      return cells;
    }),
  );
}
