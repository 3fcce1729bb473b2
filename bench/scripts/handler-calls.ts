/**
 * Part 1, in a process of its own (started by run.ts, results over IPC): handler calls per second
 * through `@sdk/sandbox` with its deadlines, against a plain JS call and a bare QuickJS call, and
 * the QuickJS memory per device instance. Nothing else runs in this process while it measures.
 */
import releaseSync from "@jitl/quickjs-wasmfile-release-sync";
import { ProjectSandbox, type SandboxHost, scriptTimeoutMessage } from "@sdk/sandbox";
import {
  newQuickJSWASMModuleFromVariant,
  type QuickJSContext,
  type QuickJSHandle,
  type QuickJSSyncVariant,
} from "quickjs-emscripten-core";
import type { Built } from "./project.ts";

export interface RunCalls {
  type: "run";
  /** The counter script (project.ts). */
  script: Built;
  /** The end-to-end script (its onMessage calls emitState): what part 2 deploys. */
  tickScript: Built;
  /** Measured seconds per variant (split into rounds), after a warm-up of a quarter of that. */
  seconds: number;
}

/** One way of calling the handler, measured in a tight loop on one thread. */
export interface CallRate {
  name: string;
  /** The median over the rounds, and the slowest and fastest round. */
  callsPerSecond: number;
  minPerSecond: number;
  maxPerSecond: number;
  /** Mean time per call at the median rate, in µs. */
  usPerCall: number;
  /** Calls over all rounds. */
  calls: number;
  /** CPU time of this process over the rounds, as % of one core (one thread: at most ~100). */
  cpuPercent: number;
}

export interface InstanceMemory {
  /** sandbox.memoryBytes after load, before any device is attached. */
  initialBytes: number;
  /** After attaching `firstDevices` devices (often unchanged: the memory starts at 16 MiB). */
  firstDevices: number;
  afterFirstBytes: number;
  /** Each time the memory grew: devices attached then, and the new size. */
  growth: { devices: number; bytes: number }[];
  /**
   * The memory grows (in 64 KB pages, ~20 % at a time) when it is full, so at each growth the
   * used part ≈ the size before it. Between the first and the last growth:
   * (size before the last − size before the first) / devices attached in between.
   */
  bytesPerInstance: number | null;
  /** The initial size minus what the instances attached before the first growth used (estimate). */
  loadBytesEstimate: number | null;
  /** Mean time of attach() (create the instance and call onDeviceConnect), µs. */
  usPerAttach: number;
}

/** Single calls with the process idle in between (one per 1 ms timer), as a server at low load. */
export interface SpacedCall {
  name: string;
  calls: number;
  medianUs: number;
  p90Us: number;
}

export interface CallsResult {
  type: "calls";
  rates: CallRate[];
  spaced: SpacedCall[];
  memory: InstanceMemory;
  /** Calls that ran past their deadline ("Script execution timeout"): none expected. */
  timeouts: number;
  /** Other error lines the sandbox logged (the first 20). */
  errors: string[];
}

const message = (seq: number) => ({ type: "tick", seq });
const rounds = 5;

interface Variant {
  name: string;
  call: (i: number) => void;
}

/** Calls `call(i)` for `ms`, in batches so the clock is read rarely. */
function timed(call: (i: number) => void, ms: number): { calls: number; elapsedMs: number; cpuMs: number } {
  const batch = 1000;
  let i = 0;
  const started = performance.now();
  const cpu = process.cpuUsage();
  let now = started;
  while (now - started < ms) {
    for (const end = i + batch; i < end; i++) call(i);
    now = performance.now();
  }
  const used = process.cpuUsage(cpu);
  return { calls: i, elapsedMs: now - started, cpuMs: (used.user + used.system) / 1000 };
}

/**
 * Warms every variant up, then measures them in turn, round after round, so that a slow spell of
 * the machine (or a JIT tier-up) does not land on one variant only. Reports each one's median round.
 */
function measureAll(variants: readonly Variant[], seconds: number): CallRate[] {
  for (const v of variants) timed(v.call, (seconds * 1000) / 4 / variants.length);
  const perRound = (seconds * 1000) / rounds;
  const samples = variants.map(() => ({ rates: [] as number[], calls: 0, elapsedMs: 0, cpuMs: 0 }));
  for (let r = 0; r < rounds; r++) {
    variants.forEach((v, i) => {
      const run = timed(v.call, perRound);
      const s = samples[i]!;
      s.rates.push((run.calls / run.elapsedMs) * 1000);
      s.calls += run.calls;
      s.elapsedMs += run.elapsedMs;
      s.cpuMs += run.cpuMs;
    });
  }
  return variants.map((v, i) => {
    const s = samples[i]!;
    const sorted = [...s.rates].sort((a, b) => a - b);
    const median = sorted[Math.floor(sorted.length / 2)]!;
    return {
      name: v.name,
      callsPerSecond: Math.round(median),
      minPerSecond: Math.round(sorted[0]!),
      maxPerSecond: Math.round(sorted.at(-1)!),
      usPerCall: Math.round((1e6 / median) * 1000) / 1000,
      calls: s.calls,
      cpuPercent: Math.round((s.cpuMs / s.elapsedMs) * 100),
    };
  });
}

const logged = { timeouts: 0, errors: [] as string[] };

const host: SandboxHost = {
  command: async () => null,
  emitState: () => {},
  send: () => {},
  log: (_deviceId, level, text) => {
    if (level !== "error") return;
    if (text === scriptTimeoutMessage) logged.timeouts++;
    else if (logged.errors.length < 20) logged.errors.push(text);
  },
};

/** A plain Node class with the same handler: the ceiling. */
class PlainCounter {
  n?: number;
  onMessage(_message: unknown) {
    this.n = (this.n ?? 0) + 1;
  }
}

const bareSource = `(() => {
  class Counter { onMessage(message) { this.n = (this.n ?? 0) + 1; } }
  const counter = new Counter();
  return (json) => counter.onMessage(JSON.parse(json));
})()`;

/**
 * The same handler in a bare QuickJS context of the same build (no sdk runtime, no bundle): a JSON
 * string in, `callFunction`, dispose. With `deadline`, an interrupt handler checks a per-call
 * deadline the way the sandbox does.
 */
async function bareQuickJS(deadline: boolean): Promise<{ call: (i: number) => void; dispose(): void }> {
  const module = await newQuickJSWASMModuleFromVariant(releaseSync as unknown as QuickJSSyncVariant);
  const runtime = module.newRuntime();
  let until = Number.POSITIVE_INFINITY;
  if (deadline) runtime.setInterruptHandler(() => performance.now() > until);
  const ctx: QuickJSContext = runtime.newContext();
  const fn: QuickJSHandle = ctx.unwrapResult(ctx.evalCode(bareSource));
  return {
    call: (i) => {
      const arg = ctx.newString(JSON.stringify(message(i)));
      if (deadline) until = performance.now() + 100;
      try {
        ctx.unwrapResult(ctx.callFunction(fn, ctx.undefined, arg)).dispose();
      } finally {
        until = Number.POSITIVE_INFINITY;
        arg.dispose();
      }
    },
    dispose: () => {
      fn.dispose();
      ctx.dispose();
      runtime.dispose();
    },
  };
}

/**
 * Times `calls` single calls, each after a 1 ms timer, so the process idles between them the way
 * a lightly loaded server does (caches and branch predictors go cold, the vCPU may sleep).
 */
async function spaced(name: string, call: (i: number) => void, calls = 2000): Promise<SpacedCall> {
  const times = new Float64Array(calls);
  for (let i = 0; i < calls; i++) {
    await new Promise((resolve) => setTimeout(resolve, 1));
    const started = performance.now();
    call(i);
    times[i] = performance.now() - started;
  }
  times.sort();
  const at = (fraction: number) => Math.round(times[Math.floor(fraction * (calls - 1))]! * 10_000) / 10;
  return { name, calls, medianUs: at(0.5), p90Us: at(0.9) };
}

async function instanceMemory(script: Built): Promise<InstanceMemory> {
  const firstDevices = 1000;
  const maxDevices = 40_000;
  const growthsWanted = 4;
  const sandbox = await ProjectSandbox.load({
    projectId: "prj_bench",
    bundle: script.bundle,
    sourceMap: script.sourceMap,
    env: {},
    host,
    // Room for every instance: the default 64 MB cap is not what is measured here.
    limits: { memoryBytes: 1024 * 1024 * 1024 },
  });
  try {
    const initialBytes = sandbox.memoryBytes;
    let afterFirstBytes = initialBytes;
    const growth: { devices: number; bytes: number }[] = [];
    let size = initialBytes;
    let attached = 0;
    const started = performance.now();
    while (attached < maxDevices && growth.length < growthsWanted) {
      sandbox.attach(`dev_${attached}`, "pico_w");
      attached++;
      if (attached === firstDevices) afterFirstBytes = sandbox.memoryBytes;
      if (sandbox.memoryBytes !== size) {
        size = sandbox.memoryBytes;
        growth.push({ devices: attached, bytes: size });
      }
    }
    const usPerAttach = ((performance.now() - started) / attached) * 1000;
    const first = growth[0];
    const last = growth.at(-1);
    const beforeLast = growth.at(-2);
    const bytesPerInstance =
      first && last && beforeLast && last !== first
        ? Math.round((beforeLast.bytes - initialBytes) / (last.devices - first.devices))
        : null;
    return {
      initialBytes,
      firstDevices,
      afterFirstBytes,
      growth,
      bytesPerInstance,
      loadBytesEstimate:
        bytesPerInstance !== null && first
          ? Math.round(initialBytes - first.devices * bytesPerInstance)
          : null,
      usPerAttach: Math.round(usPerAttach * 10) / 10,
    };
  } finally {
    sandbox.dispose();
  }
}

async function run(request: RunCalls): Promise<CallsResult> {
  const { script, tickScript, seconds } = request;
  const load = (timeoutMs?: number, built = script) =>
    ProjectSandbox.load({
      projectId: "prj_bench",
      bundle: built.bundle,
      sourceMap: built.sourceMap,
      env: {},
      host,
      limits: timeoutMs === undefined ? {} : { timeoutMs },
    });
  // (a) the sandbox as the server runs it: default limits, 100 ms deadline per call.
  const sandbox = await load();
  sandbox.attach("dev_1", "pico_w");
  // The end-to-end script: onMessage → DEVICE.emitState (a call out to the host, a no-op here).
  const emitting = await load(undefined, tickScript);
  emitting.attach("dev_1", "pico_w");
  // The same, spread over 1,000 instances (one per device) in turn.
  const many = await load();
  for (let d = 1; d <= 1000; d++) many.attach(`dev_${d}`, "pico_w");
  // (b) a deadline so far away that it never matters (the interrupt handler still runs).
  const relaxed = await load(3_600_000);
  relaxed.attach("dev_1", "pico_w");
  // (c) the ceiling: the handler as a plain function in Node.
  const plain = new PlainCounter();
  // (d) bare QuickJS: callFunction with a JSON string, without, then with, a deadline check.
  const bare = await bareQuickJS(false);
  const bareDeadline = await bareQuickJS(true);

  const rates = measureAll(
    [
      {
        name: "sandbox.deliver, 100 ms deadline (default)",
        call: (i) => sandbox.deliver("dev_1", message(i)),
      },
      {
        name: "sandbox.deliver, end-to-end script (emitState to a no-op host)",
        call: (i) => emitting.deliver("dev_1", message(i)),
      },
      {
        name: "sandbox.deliver, 100 ms deadline, 1,000 instances in turn",
        call: (i) => many.deliver(`dev_${(i % 1000) + 1}`, message(i)),
      },
      { name: "sandbox.deliver, 1 h deadline", call: (i) => relaxed.deliver("dev_1", message(i)) },
      { name: "plain JS call in Node", call: (i) => plain.onMessage(message(i)) },
      {
        name: "plain JS call in Node + JSON stringify/parse",
        call: (i) => plain.onMessage(JSON.parse(JSON.stringify(message(i)))),
      },
      { name: "bare QuickJS callFunction", call: bare.call },
      { name: "bare QuickJS callFunction + interrupt handler, 100 ms deadline", call: bareDeadline.call },
    ],
    seconds,
  );
  const spacedCalls = [
    await spaced("sandbox.deliver, counter script", (i) => sandbox.deliver("dev_1", message(i))),
    await spaced("sandbox.deliver, end-to-end script (emitState)", (i) =>
      emitting.deliver("dev_1", message(i)),
    ),
  ];
  for (const s of [sandbox, emitting, many, relaxed]) s.dispose();
  bare.dispose();
  bareDeadline.dispose();
  const memory = await instanceMemory(script);
  return { type: "calls", rates, spaced: spacedCalls, memory, ...logged };
}

process.on("message", (request: RunCalls) => {
  if (request.type !== "run") return;
  run(request).then(
    (result) => process.send?.(result),
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exit(1);
    },
  );
});
process.on("disconnect", () => process.exit(0));
process.send?.({ type: "ready" });
