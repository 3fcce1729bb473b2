import type { Child } from "./child.ts";
import { wallMs } from "./clock.ts";
import { sleep } from "./net.ts";
import type { LoopReport } from "./probe.ts";
import {
  cpuPercent,
  type MachineSample,
  type ProcSample,
  sampleMachine,
  sampleProcess,
  sampleProcesses,
} from "./proc.ts";

export interface Memory {
  /** VmRSS as the process runs. */
  rssBytes: number;
  heapUsedBytes: number;
  /** The same after a forced full GC (what is retained, without garbage). */
  rssAfterGcBytes: number;
  heapUsedAfterGcBytes: number;
}

/** CPU of the server and of the generator over a span, as % of one core. */
export interface Cpu {
  serverPercent: number;
  generatorPercent: number;
  /**
   * Share of the span the server's event loop was busy (0–1). Near 1, the server's single thread
   * is the limit, even when its CPU % is lower (time blocked in synchronous I/O is not CPU time).
   */
  serverLoopBusy: number;
  /** Share of the span the server's main thread ran on a CPU, and waited for one (0–1). */
  serverMainOnCpu: number;
  serverMainWaitingForCpu: number;
  /**
   * CPU the rest of the machine used, as % of one core: every process and kernel thread but the
   * server and the generator (other work on a shared machine, and kernel threads such as disk
   * writeback). Shows when other work competed for the cores.
   */
  otherPercent: number;
  /** Interrupt work on all cores (irq + softirq: mostly the loopback network stack), % of one core. */
  interruptPercent: number;
  /** Time the hypervisor took the vCPUs away (steal), % of one core. */
  stealPercent: number;
  /**
   * What the server wrote over the span (database, logs and sockets) and in how many write system
   * calls: counts, which do not move with the machine's load as times do. NaN when unreadable.
   */
  serverWrittenBytes: number;
  serverWriteCalls: number;
}

/** Anything whose processes can be sampled together (a load generator and its workers). */
export interface Sampled {
  sample(): ProcSample;
}

/** RSS and heap of a server, read without, then with, a forced GC. */
export async function memoryOf(child: Child): Promise<Memory> {
  const rssBytes = sampleProcess(child.pid).rssBytes;
  const plain = await child.memory(false);
  const collected = await child.memory(true);
  return {
    rssBytes,
    heapUsedBytes: plain.heapUsedBytes,
    rssAfterGcBytes: sampleProcess(child.pid).rssBytes,
    heapUsedAfterGcBytes: collected.heapUsedBytes,
  };
}

/**
 * Samples of a server (started with the probe) and of the generator at both ends of a span, for
 * CPU and event-loop use.
 */
export class Span {
  readonly #server: Child;
  readonly #generator: Sampled;
  readonly #serverSample: ProcSample;
  readonly #generatorSample: ProcSample;
  readonly #machine: MachineSample;
  readonly #loop: LoopReport;

  private constructor(server: Child, generator: Sampled, loop: LoopReport) {
    this.#server = server;
    this.#generator = generator;
    this.#loop = loop;
    this.#serverSample = sampleProcess(server.pid);
    this.#generatorSample = generator.sample();
    this.#machine = sampleMachine();
  }

  static async begin(server: Child, generator: Sampled): Promise<Span> {
    return new Span(server, generator, await server.loop());
  }

  /** CPU since the span began. */
  async end(): Promise<Cpu> {
    const server = sampleProcess(this.#server.pid);
    const generator = this.#generator.sample();
    const machine = sampleMachine();
    const loop = await this.#server.loop();
    const active = loop.activeMs - this.#loop.activeMs;
    const idle = loop.idleMs - this.#loop.idleMs;
    const serverPercent = cpuPercent(this.#serverSample, server);
    const generatorPercent = cpuPercent(this.#generatorSample, generator);
    const percent = (key: "processMs" | "interruptMs" | "stealMs") =>
      machine.at > this.#machine.at
        ? ((machine[key] - this.#machine[key]) / (machine.at - this.#machine.at)) * 100
        : 0;
    return {
      serverPercent,
      generatorPercent,
      otherPercent: Math.max(0, percent("processMs") - serverPercent - generatorPercent),
      interruptPercent: percent("interruptMs"),
      stealPercent: percent("stealMs"),
      serverLoopBusy: active + idle > 0 ? active / (active + idle) : 0,
      serverMainOnCpu: share(this.#serverSample, server, "mainRunMs"),
      serverMainWaitingForCpu: share(this.#serverSample, server, "mainWaitMs"),
      serverWrittenBytes: server.writtenBytes - this.#serverSample.writtenBytes,
      serverWriteCalls: server.writeCalls - this.#serverSample.writeCalls,
    };
  }
}

function share(from: ProcSample, to: ProcSample, key: "mainRunMs" | "mainWaitMs"): number {
  const wallMs = to.at - from.at;
  return wallMs > 0 ? (to[key] - from[key]) / wallMs : 0;
}

export interface Latency {
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

/** Percentiles of sorted durations (ms), rounded to `digits` decimals (whole ms by default). */
export function latency(sorted: ArrayLike<number>, digits = 0): Latency {
  const scale = 10 ** digits;
  const at = (fraction: number) =>
    Math.round((sorted[Math.max(0, Math.ceil(fraction * sorted.length) - 1)] ?? 0) * scale) / scale;
  return { p50Ms: at(0.5), p99Ms: at(0.99), maxMs: at(1) };
}

/** Polls `check` until it holds; resolves with how long that took (ms) or null on timeout. */
export async function timeUntil(
  check: () => Promise<boolean>,
  timeoutMs: number,
  everyMs: number,
): Promise<number | null> {
  const started = wallMs();
  while (wallMs() - started < timeoutMs) {
    if (await check()) return Math.round(wallMs() - started);
    await sleep(everyMs);
  }
  return null;
}

/**
 * Waits until a server's event loop is quiet (busy less than `threshold` of a `windowMs` window),
 * e.g. after a step left it a backlog. Resolves with how long that took (ms), or null after
 * `timeoutMs`. The server must run with the probe.
 */
export async function waitIdle(
  child: Child,
  timeoutMs: number,
  threshold = 0.1,
  windowMs = 250,
): Promise<number | null> {
  const started = wallMs();
  let last = await child.loop();
  while (wallMs() - started < timeoutMs) {
    await sleep(windowMs);
    const now = await child.loop();
    const active = now.activeMs - last.activeMs;
    const idle = now.idleMs - last.idleMs;
    last = now;
    if (active + idle > 0 && active / (active + idle) < threshold) return Math.round(wallMs() - started);
  }
  return null;
}

/**
 * Waits until the rest of the machine is quiet: over a 1 s window, the CPU used by everything but
 * `pids` (the processes under test) is below `thresholdPercent` of one core. Gives up after
 * `timeoutMs`. Resolves with how long it waited and the last window's figure.
 */
export async function waitQuiet(
  pids: readonly number[],
  timeoutMs: number,
  thresholdPercent = 25,
): Promise<{ waitedMs: number; otherPercent: number }> {
  const started = performance.now();
  for (let attempt = 0; ; attempt++) {
    const machine = sampleMachine();
    const ours = sampleProcesses(pids);
    await sleep(1_000);
    const machineAfter = sampleMachine();
    const oursAfter = sampleProcesses(pids);
    const machinePercent =
      ((machineAfter.processMs - machine.processMs) / (machineAfter.at - machine.at)) * 100;
    const otherPercent = Math.max(0, machinePercent - cpuPercent(ours, oursAfter));
    if (otherPercent < thresholdPercent || performance.now() - started > timeoutMs) {
      const waitedMs = attempt === 0 ? 0 : Math.round(performance.now() - started - 1_000);
      return { waitedMs, otherPercent: Math.round(otherPercent) };
    }
  }
}
