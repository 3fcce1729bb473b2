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
function errorCount(r: TargetResult, text: string): number {
  return Object.entries(r.storm.errors)
    .filter(([message]) => message.includes(text))
    .reduce((sum, [, n]) => sum + n, 0);
}

const rows: Row[] = [
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
  { label: "RSS after the storm (MiB)", value: (r) => mib(r.memory.afterStorm.rssBytes), digits: 1 },
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
  { label: "**Idle: server CPU (% of a core)**", value: (r) => r.idle.serverPercent, digits: 2 },
  { label: "Idle: server event loop busy (%)", value: (r) => r.idle.serverLoopBusy * 100, digits: 2 },
  { label: "Idle: server CPU per 1,000 devices (%)", value: (r) => r.idle.serverPercentPer1000, digits: 3 },
  { label: "Idle: generator CPU (% of a core)", value: (r) => r.idle.generatorPercent, digits: 2 },
  { label: "Storm: SIGTERM → old process gone (s)", value: (r) => s(r.storm.stopMs), digits: 2 },
  { label: "Storm: SIGTERM → new process accepting (s)", value: (r) => s(r.storm.downMs), digits: 2 },
  { label: "Storm: accepting → 50 % online (s)", value: (r) => s(r.storm.fromReady.p50Ms), digits: 2 },
  { label: "Storm: accepting → 99 % online (s)", value: (r) => s(r.storm.fromReady.p99Ms), digits: 2 },
  { label: "**Storm: accepting → all online (s)**", value: (r) => s(r.storm.fromReady.allMs), digits: 2 },
  { label: "Storm: SIGTERM → all online (s)", value: (r) => s(r.storm.fromSigtermMs), digits: 2 },
  {
    label: "Storm: accepting → last successful dial (s)",
    value: (r) => s(r.storm.lastDialFromReadyMs),
    digits: 2,
  },
  { label: "Storm: dial → welcome p50 (ms)", value: (r) => r.storm.handshake.p50Ms, digits: 0 },
  { label: "Storm: dial → welcome p99 (ms)", value: (r) => r.storm.handshake.p99Ms, digits: 0 },
  { label: "Storm: dial → welcome max (ms)", value: (r) => r.storm.handshake.maxMs, digits: 0 },
  { label: "Storm: SYNs dropped, accept queue full", value: (r) => r.storm.tcp.listenOverflows, digits: 0 },
  { label: "Storm: dials refused (no server yet)", value: (r) => errorCount(r, "ECONNREFUSED"), digits: 0 },
  {
    label: "Storm: handshakes the device gave up on (10 s)",
    value: (r) => errorCount(r, "handshake has timed out"),
    digits: 0,
  },
  { label: "Storm: dial attempts", value: (r) => r.storm.attempts, digits: 0 },
  { label: "Storm: server CPU (% of a core)", value: (r) => r.storm.cpu.serverPercent, digits: 0 },
  { label: "Storm: server event loop busy (%)", value: (r) => r.storm.cpu.serverLoopBusy * 100, digits: 0 },
  {
    label: "Storm: server main thread on a CPU (%)",
    value: (r) => r.storm.cpu.serverMainOnCpu * 100,
    digits: 0,
  },
  {
    label: "Storm: server main thread waiting for a CPU (%)",
    value: (r) => r.storm.cpu.serverMainWaitingForCpu * 100,
    digits: 0,
  },
  { label: "Storm: generator CPU (% of a core)", value: (r) => r.storm.cpu.generatorPercent, digits: 0 },
  {
    label: "Storm: REST API counts all online (s after accepting)",
    value: (r) => (r.storm.restAllOnlineFromReadyMs === null ? null : s(r.storm.restAllOnlineFromReadyMs)),
    digits: 2,
  },
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
