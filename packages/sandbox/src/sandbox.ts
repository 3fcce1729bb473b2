import type { GuestEntryName, GuestEntryPoints } from "@sdk/device/abi";
import { CpuBudget } from "./budget.ts";
import { Deadline } from "./deadline.ts";
import {
  collapseRepeats,
  type GuestError,
  hostStackOverflowMessage,
  isHostStackOverflow,
  isInterrupt,
  isOutOfMemory,
  isStackOverflow,
  ScriptLoadError,
  scriptTimeoutMessage,
} from "./errors.ts";
import { GuestEntries, installGuestHost } from "./guest-abi.ts";
import { guestHostFunctions } from "./guest-host.ts";
import { type GuestTime, installGuestTime } from "./guest-time.ts";
import { defaultLimits, type SandboxLimits } from "./limits.ts";
import type { SandboxHost } from "./sandbox-host.ts";
import { realScheduler, type Scheduler } from "./scheduler.ts";
import { SourceMapper } from "./source-map.ts";
import { DeviceTimers } from "./timers.ts";
import { ProjectModule } from "./wasm-module.ts";

/** After an entry this long (CPU ms), the sandbox's next budgeted entries wait for the next turn of the event loop. */
const longEntryMs = 10;

export interface LoadOptions {
  projectId: string;
  bundle: string;
  sourceMap?: string;
  env: Record<string, string>;
  host: SandboxHost;
  limits?: Partial<SandboxLimits>;
  /**
   * The server's base URL (`https://sdk.example.com`): `SdkError.docs` in scripts is
   * `<docsBaseUrl>/docs/errors#<code>`. Without it, `docs` is only the path.
   */
  docsBaseUrl?: string;
  /** The sandbox stopped itself (memory over the cap, promise jobs that never end); it is disposed and must be reloaded. */
  onFault?: (reason: string) => void;
  /** The CPU budget (limits.cpuBudgetMs) ran out: called once per window in which entries had to wait. */
  onThrottle?: () => void;
  /** `n` delivered messages have run (or were dropped): what back-pressure counts. */
  onDelivered?: (n: number) => void;
  /**
   * The clock the scripts' timers (and the CPU budget's waits) run on: Node.js's timers by default;
   * `sdk test` passes a virtual one. `Date` inside a script reads the real time unless `time` is given.
   */
  scheduler?: Scheduler;
  /**
   * What `Date` and `Math.random` give the script (`sdk test`: the recording's time on the virtual
   * clock, a seed from the recording). Without it, the real time and randomness (the server).
   */
  time?: GuestTime;
}

/** An entry that waits for the next budget window. */
interface Deferred {
  deviceId: string;
  name: "fire" | "message" | "settle";
  args: unknown[];
  /** A timer that fires again while waiting runs once. */
  timerKey?: string;
}

/**
 * One project's scripts: a QuickJS WebAssembly module of its own (so projects cannot see or starve
 * each other's memory), one context evaluating the deployed bundle, and one instance of the
 * script's class per attached device. Every entry into the guest runs under a deadline.
 */
export class ProjectSandbox {
  readonly projectId: string;
  readonly #module: ProjectModule;
  readonly #deadline: Deadline;
  readonly #host: SandboxHost;
  readonly #limits: SandboxLimits;
  readonly #mapper: SourceMapper;
  readonly #onFault?: (reason: string) => void;
  readonly #onThrottle?: () => void;
  readonly #onDelivered?: (n: number) => void;
  readonly #budget: CpuBudget | null;
  readonly #scheduler: Scheduler;
  readonly #deferred: Deferred[] = [];
  readonly #deferredTimers = new Set<string>();
  #drainTimer: unknown;
  #throttledWindow = false;
  /** CPU time of the last entry, its leftover promise jobs included. */
  #entryCpuMs = 0;
  /** A long entry ran in this turn of the event loop: the next ones wait for the following turn. */
  #busyTurn = false;
  /** Attached devices; their timers once they use some (idle boards are many). */
  readonly #devices = new Map<string, DeviceTimers | null>();
  #entries: GuestEntries | undefined;
  /** An allocation failed in the guest, even if the script caught the error. */
  #outOfMemoryReported = false;
  #fault: string | null = null;
  /** The guest ran out of stack and reported it (the runtime catches handler errors): its mapped stack. */
  #stackOverflowReported: string | null = null;
  #env: Record<string, string>;
  /** The entry point running now (null between entries). */
  #entry: GuestEntryName | null = null;
  /** Entries started so far (tells one entry's output from the next one's). */
  #entriesRun = 0;

  private constructor(module: ProjectModule, options: LoadOptions, limits: SandboxLimits) {
    this.projectId = options.projectId;
    this.#module = module;
    this.#host = options.host;
    this.#limits = limits;
    this.#onFault = options.onFault;
    this.#onThrottle = options.onThrottle;
    this.#onDelivered = options.onDelivered;
    this.#scheduler = options.scheduler ?? realScheduler;
    this.#budget = limits.cpuBudgetMs > 0 ? new CpuBudget(limits.cpuBudgetMs) : null;
    this.#env = options.env;
    this.#mapper = new SourceMapper(options.sourceMap);
    this.#deadline = new Deadline(module.runtime);
    const functions = guestHostFunctions({
      host: this.#host,
      timers: (deviceId) => this.#timersOf(deviceId),
      settle: (deviceId, commandId, ok, json) => this.#settle(deviceId, commandId, ok, json),
      interrupted: () => this.#deadline.expired,
      outOfMemory: () => {
        this.#outOfMemoryReported = true;
      },
      stackOverflow: (stack) => {
        this.#stackOverflowReported ??= collapseRepeats(this.#mapper.mapStack(stack));
      },
      mapStack: (stack) => this.#mapper.mapStack(stack),
      entry: () => this.#entry,
    });
    installGuestHost(module.ctx, functions, options.docsBaseUrl ?? "");
    if (options.time) installGuestTime(module.ctx, options.time);
  }

  /** Creates the project's module and evaluates the bundle. Throws `ScriptLoadError`. */
  static async load(options: LoadOptions): Promise<ProjectSandbox> {
    const limits = { ...defaultLimits, ...options.limits };
    const sandbox = new ProjectSandbox(await ProjectModule.create(limits.memoryBytes), options, limits);
    try {
      sandbox.#evaluate(options.bundle);
    } catch (error) {
      sandbox.dispose();
      throw error;
    }
    return sandbox;
  }

  /** The size of this project's WebAssembly memory (it grows, and never shrinks). */
  get memoryBytes(): number {
    return this.#module.memoryBytes;
  }

  get disposed(): boolean {
    return this.#module.disposed;
  }

  /** Why the sandbox stopped itself (memory cap, stack overflow, runaway promise jobs), or null. */
  get fault(): string | null {
    return this.#fault;
  }

  /** The entry point running now, or null: output a device message caused is never dropped, a timer's may be. */
  get currentEntry(): GuestEntryName | null {
    return this.#entry;
  }

  /** How many entries have started so far. */
  get entriesRun(): number {
    return this.#entriesRun;
  }

  /** Devices with an instance of the script. */
  get devices(): string[] {
    return [...this.#devices.keys()];
  }

  /** Creates the device's instance and calls `onDeviceConnect`. */
  attach(deviceId: string, board: string): void {
    if (this.disposed || this.#devices.has(deviceId)) return;
    this.#devices.set(deviceId, null);
    if (this.#enter(deviceId, "create", [deviceId, this.projectId, board, JSON.stringify(this.#env)])) {
      this.#enter(deviceId, "connect", [deviceId]);
    }
  }

  /** The timers of an attached device (created on first use); undefined when it is not attached. */
  #timersOf(deviceId: string): DeviceTimers | undefined {
    const timers = this.#devices.get(deviceId);
    if (timers !== null) return timers;
    const created = new DeviceTimers(
      this.#limits,
      (id) => this.#budgeted(deviceId, "fire", [deviceId, id], `${deviceId}\0${id}`),
      this.#scheduler,
    );
    this.#devices.set(deviceId, created);
    return created;
  }

  /** Calls `onMessage` of the device's instance. */
  deliver(deviceId: string, message: Record<string, unknown>): boolean {
    if (this.disposed || !this.#devices.has(deviceId)) return false;
    this.#budgeted(deviceId, "message", [deviceId, JSON.stringify(message)]);
    return true;
  }

  /** Calls `onDeviceDisconnect`, clears the instance's timers and drops it. */
  detach(deviceId: string): void {
    if (!this.#devices.has(deviceId)) return;
    this.#enter(deviceId, "disconnect", [deviceId]);
    this.#devices.get(deviceId)?.clearAll();
    this.#devices.delete(deviceId);
  }

  /** New env var values reach every running instance (`this.env`). */
  setEnv(env: Record<string, string>): void {
    this.#env = env;
    if (!this.disposed) this.#enter(null, "setEnv", [JSON.stringify(env)]);
  }

  /** Stops every timer and frees the module. Instances get no disconnect call. */
  dispose(): void {
    if (this.#drainTimer !== undefined) this.#scheduler.clear(this.#drainTimer);
    const waiting = this.#deferred.filter((d) => d.name === "message").length;
    this.#deferred.length = 0;
    this.#deferredTimers.clear();
    if (waiting > 0) this.#onDelivered?.(waiting);
    for (const timers of this.#devices.values()) timers?.clearAll();
    this.#devices.clear();
    this.#module.dispose(() => this.#entries?.dispose()); // nothing when already disposed or abandoned
  }

  #evaluate(bundle: string): void {
    const { ctx, runtime } = this.#module;
    const failed = (handle: Parameters<ProjectModule["takeError"]>[0]) =>
      new ScriptLoadError(this.#describe(this.#module.takeError(handle), "the script failed to load"));
    this.#deadline.run(this.#limits.loadTimeoutMs, () => {
      const result = this.#guarded(() => ctx.evalCode(bundle, "script.js", { type: "module" }));
      if (result.error) throw failed(result.error);
      let namespace = result.value;
      const jobs = runtime.executePendingJobs();
      if (jobs.error) {
        namespace.dispose();
        throw failed(jobs.error);
      }
      const state = ctx.getPromiseState(namespace);
      if (state.type === "fulfilled") {
        if (!state.notAPromise) {
          namespace.dispose();
          namespace = state.value;
        }
      } else if (state.type === "rejected") {
        namespace.dispose();
        throw failed(state.error);
      }
      const exported = ctx.getProp(namespace, "default");
      namespace.dispose();
      this.#entries = GuestEntries.take(ctx, exported);
    });
    if (this.#module.full) {
      throw new ScriptLoadError(
        `the script used more than ${this.#limits.memoryBytes >> 20} MB while loading`,
      );
    }
  }

  /** Runs one entry point and then the promise jobs it queued, under the deadline. */
  #enter<K extends GuestEntryName>(
    deviceId: string | null,
    name: K,
    args: Parameters<GuestEntryPoints[K]>,
  ): boolean {
    if (this.disposed || !this.#entries) return false;
    const entries = this.#entries;
    let hostOverflow = false;
    const outer = this.#entry;
    this.#entry = name;
    this.#entriesRun++;
    this.#host.entered?.(deviceId, name);
    const error = this.#deadline.run(this.#limits.timeoutMs, (): GuestError | null => {
      try {
        const result = entries.call(name, args);
        if (result.error) return this.#module.takeError(result.error);
        result.value.dispose();
        if (this.disposed) return null;
        const jobs = this.#module.runtime.executePendingJobs();
        return jobs.error ? this.#module.takeError(jobs.error) : null;
      } catch (thrown) {
        if (!isHostStackOverflow(thrown)) throw thrown;
        hostOverflow = true;
        return null;
      }
    });
    this.#entry = outer;
    this.#entryCpuMs = this.#deadline.lastRunMs;
    if (hostOverflow) {
      this.#module.abandon();
      this.#stop(hostStackOverflowMessage);
      return false;
    }
    if (isStackOverflow(error)) {
      this.#stop(this.#describe(error!, "stack overflow"));
      return false;
    }
    if (this.#stackOverflowReported !== null) {
      this.#stop(this.#stackOverflowReported);
      return false;
    }
    if (this.#outOfMemoryReported || isOutOfMemory(error) || this.#module.full) {
      this.#stop(
        `memory limit exceeded: the project's scripts reached the ${(this.#limits.memoryBytes / 1048576).toFixed(0)} MB cap`,
      );
      return false;
    }
    // A timeout is reported even when the guest swallowed the interrupt (an async function's
    // rejected promise, a try/catch around a loop).
    const timedOut = this.#deadline.expired || isInterrupt(error);
    if (!error && !timedOut) return true;
    const target = deviceId ?? this.#devices.keys().next().value;
    if (target !== undefined) {
      this.#host.log(
        target,
        "error",
        timedOut ? scriptTimeoutMessage : this.#describe(error!, "the script failed"),
      );
      this.#host.failed?.(target, timedOut ? "timeout" : "error", name);
    }
    if (timedOut && !this.#drainLeftoverJobs()) {
      this.#stop("a chain of promise jobs kept running past the deadline");
    }
    return false;
  }

  /**
   * Promise jobs an interrupted entry left queued would otherwise run inside the next entry's
   * deadline. They get one deadline of their own; false when they are still running after it.
   */
  #drainLeftoverJobs(): boolean {
    const { runtime } = this.#module;
    const drained = this.#deadline.run(this.#limits.timeoutMs, () => {
      while (runtime.hasPendingJob() && !this.#deadline.expired) {
        const jobs = runtime.executePendingJobs();
        if (jobs.error) jobs.error.dispose();
      }
      return !this.#deadline.expired;
    });
    this.#entryCpuMs += this.#deadline.lastRunMs;
    return drained;
  }

  /** The guest reached a limit that stops the whole sandbox; `reason` goes to every attached device's log. */
  #stop(reason: string): void {
    if (this.#fault !== null) return;
    this.#fault = reason;
    for (const deviceId of this.devices)
      this.#host.log(deviceId, "error", `${reason}\nThe project's scripts were stopped.`);
    this.dispose();
    this.#onFault?.(reason);
  }

  /** Evaluating the bundle can exhaust the host's stack too; that is the script's error, not the server's. */
  #guarded<T>(fn: () => T): T {
    try {
      return fn();
    } catch (thrown) {
      if (!isHostStackOverflow(thrown)) throw thrown;
      this.#module.abandon();
      throw new ScriptLoadError(hostStackOverflowMessage);
    }
  }

  #describe(error: GuestError, fallback: string): string {
    if (isInterrupt(error)) return scriptTimeoutMessage;
    const head = `${error.name ?? "Error"}: ${error.message ?? fallback}`;
    return error.stack ? collapseRepeats(`${head}\n${this.#mapper.mapStack(error.stack)}`) : head;
  }

  #settle(deviceId: string, commandId: number, ok: boolean, json: string): void {
    if (this.disposed || !this.#devices.has(deviceId)) return;
    this.#budgeted(deviceId, "settle", [deviceId, commandId, ok, json]);
  }

  /** Messages waiting for the next budget window. */
  get waitingMessages(): number {
    return this.#deferred.filter((d) => d.name === "message").length;
  }

  /** Runs a timer, message or command result now, or after the budget's next window when it is spent. */
  #budgeted(deviceId: string, name: Deferred["name"], args: unknown[], timerKey?: string): void {
    const budget = this.#budget;
    if (budget && (this.#deferred.length > 0 || this.#busyTurn || budget.exhausted)) {
      if (timerKey !== undefined) {
        if (this.#deferredTimers.has(timerKey)) return;
        this.#deferredTimers.add(timerKey);
      }
      this.#deferred.push({ deviceId, name, args, timerKey });
      if (!this.#throttledWindow && budget.exhausted) {
        this.#throttledWindow = true;
        this.#onThrottle?.();
      }
      this.#drainTimer ??= this.#scheduler.setTimeout(() => this.#drain(), budget.untilNextWindowMs);
      return;
    }
    this.#run({ deviceId, name, args });
  }

  #run(entry: Deferred): void {
    this.#entryCpuMs = 0;
    this.#enter(entry.deviceId, entry.name, entry.args as never);
    if (this.#budget) {
      this.#budget.spend(this.#entryCpuMs);
      if (this.#entryCpuMs >= longEntryMs && !this.#busyTurn) {
        this.#busyTurn = true;
        setImmediate(() => {
          this.#busyTurn = false;
        });
      }
    }
    if (entry.name === "message") this.#onDelivered?.(1);
  }

  /**
   * Budget again: what waited runs, in order, one entry per turn of the thread's event loop (so the
   * worker's messages — a redeploy, other projects — get their turn in between), until the budget
   * is spent again.
   */
  #drain(): void {
    this.#drainTimer = undefined;
    const budget = this.#budget!;
    if (this.disposed || this.#deferred.length === 0) return;
    if (budget.exhausted) {
      this.#drainTimer = this.#scheduler.setTimeout(() => this.#drain(), budget.untilNextWindowMs + 1);
      return;
    }
    this.#throttledWindow = false;
    const entry = this.#deferred.shift()!;
    if (entry.timerKey !== undefined) this.#deferredTimers.delete(entry.timerKey);
    if (this.#devices.has(entry.deviceId)) this.#run(entry);
    else if (entry.name === "message") this.#onDelivered?.(1);
    if (this.disposed || this.#deferred.length === 0) return;
    if (budget.exhausted && !this.#throttledWindow) {
      this.#throttledWindow = true;
      this.#onThrottle?.();
    }
    this.#drainTimer = this.#scheduler.setTimeout(() => this.#drain(), budget.untilNextWindowMs);
  }
}
