import { Worker } from "node:worker_threads";
import { type LogLevel, logLevels } from "@sdk/protocol";
import { type SandboxLimits, ScriptLoadError } from "@sdk/sandbox";
import type { FromWorker, ToWorker } from "./messages.ts";

/** What the main thread does with a sandbox's host calls. Promises settle once the write is stored. */
export interface RemoteHost {
  emitState(deviceId: string, entityId: string, value: unknown): Promise<unknown>;
  log(deviceId: string, level: LogLevel, message: string): Promise<unknown> | undefined;
  send(deviceId: string, message: Record<string, unknown>): void;
  command(deviceId: string, type: string, args: Record<string, unknown>): Promise<unknown>;
  /** `entry`: the entry point that failed, when the worker said. */
  failed(deviceId: string, kind: "error" | "timeout", entry?: string): void;
  /** The sandbox ran `calls` more entries (onDeviceConnect, onMessage, timers, command results), `connects` of them onDeviceConnect. */
  entered?(calls: number, connects: number): void;
  /** The worker dropped `n` of the device's output items: too many were waiting to be stored. */
  dropped(deviceId: string, n: number): void;
  /** The sandbox was disposed with `n` device messages still waiting to run (they are lost). */
  lost(n: number): void;
  /** The CPU budget ran out: entries wait for the next second. */
  throttled(): void;
  /**
   * The sandbox stopped itself (`script`: memory cap, stack overflow, runaway promise jobs), or its
   * worker thread ended under it (`crash`: not the project's doing).
   */
  fault(reason: string, kind: "script" | "crash"): void;
}

export interface PoolOptions {
  /** Workers shared by projects that stay within their CPU budget. */
  workers: number;
  /**
   * Output items (emitState, log, send, commands) of one project that may wait to be stored or
   * answered: device sockets wait above it (`waitForRoom`), a timer's output is dropped above it.
   */
  maxOutputInFlight: number;
  /** Messages queued into a project's worker above which device sockets wait (`waitForRoom`). */
  queueHighWater: number;
  queueLowWater: number;
}

/** The worker's entry beside this file: `.ts` from the sources (the repository, the image), `.js` in the npm packages. */
const workerSource = new URL("./worker.ts", import.meta.url);
const workerUrl = import.meta.url.endsWith(".ts")
  ? workerSource
  : new URL(workerSource.href.replace(/\.ts$/, ".js"));

/**
 * One worker thread and the sandboxes it runs. Messages both ways go in one batch per turn of the
 * event loop, not per callback (a device's frame arrives in a socket callback of its own; why and
 * what it saves: docs/architecture.md, "Scripts in worker threads").
 */
class ScriptWorker {
  readonly isolated: boolean;
  readonly sandboxes = new Map<number, RemoteSandbox>();
  readonly #worker: Worker;
  #outbox: ToWorker[] = [];
  readonly #acks = new Map<number, number>();
  readonly #loads = new Map<number, { resolve: () => void; reject: (e: Error) => void }>();
  readonly #syncs = new Map<number, (fault: string | null) => void>();
  #nextReq = 1;
  #exited = false;

  constructor(isolated: boolean, onExit: (w: ScriptWorker) => void) {
    this.isolated = isolated;
    this.#worker = new Worker(workerUrl, { name: isolated ? "scripts (isolated)" : "scripts" });
    this.#worker.on("message", (batch: FromWorker[]) => {
      for (const m of batch) this.#receive(m);
    });
    this.#worker.on("error", (error) => console.error("script worker failed:", error));
    this.#worker.on("exit", () => {
      this.#exited = true;
      const reason = "the scripts' worker thread stopped";
      for (const { reject } of this.#loads.values()) reject(new Error(reason));
      for (const resolve of this.#syncs.values()) resolve(reason);
      this.#loads.clear();
      this.#syncs.clear();
      for (const sandbox of [...this.sandboxes.values()]) sandbox.faulted(reason, "crash");
      onExit(this);
    });
    // After the listeners: the server's lifecycle ends the workers, they never keep the process up.
    this.#worker.unref();
  }

  post(op: ToWorker): void {
    if (this.#exited) return;
    this.#flushSoon();
    this.#outbox.push(op);
  }

  ack(id: number, n = 1): void {
    if (this.#exited) return;
    this.#flushSoon();
    this.#acks.set(id, (this.#acks.get(id) ?? 0) + n);
  }

  /** Schedules the flush of this iteration, unless one is already due. */
  #flushSoon(): void {
    if (this.#outbox.length === 0 && this.#acks.size === 0) setImmediate(() => this.#flush());
  }

  #flush(): void {
    const batch = this.#outbox;
    this.#outbox = [];
    for (const [id, n] of this.#acks) batch.push({ t: "ack", id, n });
    this.#acks.clear();
    if (batch.length > 0 && !this.#exited) this.#worker.postMessage(batch);
  }

  load(sandbox: RemoteSandbox, op: Extract<ToWorker, { t: "load" }>): Promise<void> {
    this.sandboxes.set(sandbox.id, sandbox);
    return new Promise((resolve, reject) => {
      this.#loads.set(sandbox.id, { resolve, reject });
      this.post(op);
    });
  }

  sync(id: number): Promise<string | null> {
    if (this.#exited) return Promise.resolve("the scripts' worker thread stopped");
    const req = this.#nextReq++;
    return new Promise((resolve) => {
      this.#syncs.set(req, resolve);
      this.post({ t: "sync", id, req });
    });
  }

  terminate(): void {
    this.#exited = true;
    void this.#worker.terminate();
  }

  /** Ends the thread as a crash would: its sandboxes fault with kind `crash` (tests). */
  crash(): void {
    void this.#worker.terminate();
  }

  #receive(m: FromWorker): void {
    if (m.t === "loaded") {
      const pending = this.#loads.get(m.id);
      this.#loads.delete(m.id);
      if (!m.error) {
        pending?.resolve();
        return;
      }
      this.sandboxes.delete(m.id);
      pending?.reject(m.error.load ? new ScriptLoadError(m.error.message) : new Error(m.error.message));
      return;
    }
    if (m.t === "synced") {
      this.#syncs.get(m.req)?.(m.fault);
      this.#syncs.delete(m.req);
      return;
    }
    if (m.t === "disposed") {
      const gone = this.sandboxes.get(m.id);
      this.sandboxes.delete(m.id);
      if (m.lost > 0) gone?.host.lost(m.lost);
      return;
    }
    const sandbox = this.sandboxes.get(m.id);
    if (m.t === "detached") {
      sandbox?.detachedInWorker(m.deviceId);
      return;
    }
    // What the worker says is checked: output only for devices attached to that sandbox, valid levels.
    if (
      "deviceId" in m &&
      m.t !== "dropped" &&
      (!sandbox?.hasDevice(m.deviceId) ||
        (m.t === "log" && !(logLevels as readonly string[]).includes(m.level)))
    ) {
      if (m.t === "emit" || m.t === "log" || m.t === "send") this.ack(m.id);
      if (m.t === "command")
        this.post({ t: "result", cmd: m.cmd, ok: false, value: { code: "invalid_argument" } });
      return;
    }
    // A disposed sandbox's last output (onDeviceDisconnect's, say) is still stored: it stays here until the worker says it is gone.
    if (!sandbox || sandbox.fault !== null || (sandbox.disposed && m.t === "command")) {
      if (m.t === "emit" || m.t === "log" || m.t === "send") this.ack(m.id);
      if (m.t === "command") this.post({ t: "result", cmd: m.cmd, ok: false, value: { code: "no_script" } });
      return;
    }
    if (m.t === "emit" || m.t === "log" || m.t === "send" || m.t === "command") sandbox.outputStarted();
    const done = () => {
      sandbox.outputDone();
      this.ack(m.id);
    };
    const host = sandbox.host;
    switch (m.t) {
      case "emit":
        void host.emitState(m.deviceId, m.entityId, m.value).finally(done);
        return;
      case "log": {
        const written = host.log(m.deviceId, m.level, m.message);
        if (written) void written.finally(done);
        else done();
        return;
      }
      case "send":
        host.send(m.deviceId, m.message);
        done();
        return;
      case "command":
        host.command(m.deviceId, m.type, m.args).then(
          (value) => {
            sandbox.outputDone();
            this.post({ t: "result", cmd: m.cmd, ok: true, value });
          },
          (error: unknown) => {
            sandbox.outputDone();
            this.post({ t: "result", cmd: m.cmd, ok: false, value: error });
          },
        );
        return;
      case "failed":
        host.failed(m.deviceId, m.kind, m.entry);
        return;
      case "entered":
        host.entered?.(m.calls, m.connects);
        return;
      case "dropped":
        host.dropped(m.deviceId, m.n);
        return;
      case "throttled":
        host.throttled();
        return;
      case "delivered":
        sandbox.delivered(m.n);
        return;
      case "fault":
        sandbox.faulted(m.reason);
        return;
    }
  }
}

/** A project's sandbox living in a worker thread; the same operations as ProjectSandbox, posted. */
export class RemoteSandbox {
  readonly id: number;
  readonly projectId: string;
  readonly host: RemoteHost;
  readonly worker: ScriptWorker;
  readonly #options: PoolOptions;
  readonly #devices = new Set<string>();
  /** Detached devices whose instance may still make output (the worker has not said `detached`), with how many detaches are pending. */
  readonly #leaving = new Map<string, number>();
  #fault: string | null = null;
  #disposed = false;
  /** Messages posted to the worker that have not run yet. */
  #queued = 0;
  /** Output items (emitState, log, send, commands) from the worker not stored or answered yet. */
  #output = 0;
  #roomWaiters: (() => void)[] = [];

  constructor(id: number, projectId: string, host: RemoteHost, worker: ScriptWorker, options: PoolOptions) {
    this.id = id;
    this.projectId = projectId;
    this.host = host;
    this.worker = worker;
    this.#options = options;
  }

  get disposed(): boolean {
    return this.#disposed;
  }

  get fault(): string | null {
    return this.#fault;
  }

  get devices(): string[] {
    return [...this.#devices];
  }

  /** The sandbox runs in the worker for projects over their CPU budget. */
  get isolated(): boolean {
    return this.worker.isolated;
  }

  attach(deviceId: string, board: string): void {
    if (this.#disposed || this.#devices.has(deviceId)) return;
    this.#devices.add(deviceId);
    this.worker.post({ t: "attach", id: this.id, deviceId, board });
  }

  detach(deviceId: string): void {
    if (!this.#devices.delete(deviceId) || this.#disposed) return;
    this.#leaving.set(deviceId, (this.#leaving.get(deviceId) ?? 0) + 1);
    this.worker.post({ t: "detach", id: this.id, deviceId });
  }

  /** The worker ran the device's detach. */
  detachedInWorker(deviceId: string): void {
    const n = (this.#leaving.get(deviceId) ?? 1) - 1;
    if (n > 0) this.#leaving.set(deviceId, n);
    else this.#leaving.delete(deviceId);
  }

  /** The device has an instance in this sandbox, or had one that may still be finishing. */
  hasDevice(deviceId: string): boolean {
    return this.#devices.has(deviceId) || this.#leaving.has(deviceId);
  }

  deliver(deviceId: string, message: Record<string, unknown>): boolean {
    if (this.#disposed || !this.#devices.has(deviceId)) return false;
    this.#queued++;
    this.worker.post({ t: "deliver", id: this.id, deviceId, message });
    return true;
  }

  setEnv(env: Record<string, string>): void {
    if (!this.#disposed) this.worker.post({ t: "env", id: this.id, env });
  }

  /** Resolves once everything posted so far has run, with the sandbox's fault (or null). */
  async sync(): Promise<string | null> {
    if (this.#disposed) return this.#fault;
    return (await this.worker.sync(this.id)) ?? this.#fault;
  }

  /**
   * Null while fewer messages than the high-water mark wait in the worker and fewer output items
   * than `maxOutputInFlight` wait to be stored, else resolves once both are at their low marks.
   */
  waitForRoom(): Promise<void> | null {
    if (this.#disposed) return null;
    if (this.#queued < this.#options.queueHighWater && this.#output < this.#options.maxOutputInFlight)
      return null;
    return new Promise((resolve) => this.#roomWaiters.push(resolve));
  }

  /** At a back-pressure bound: `waitForRoom` would wait. */
  get full(): boolean {
    return (
      !this.#disposed &&
      (this.#queued >= this.#options.queueHighWater || this.#output >= this.#options.maxOutputInFlight)
    );
  }

  outputStarted(): void {
    this.#output++;
  }

  outputDone(): void {
    this.#output = Math.max(0, this.#output - 1);
    this.#maybeRelease();
  }

  /** Stops the sandbox; what it already made is still stored (it leaves `worker.sandboxes` once the worker says `disposed`). */
  dispose(): void {
    if (this.#disposed) return;
    this.#disposed = true;
    for (const deviceId of this.#devices) this.#leaving.set(deviceId, (this.#leaving.get(deviceId) ?? 0) + 1);
    this.#devices.clear();
    this.worker.post({ t: "dispose", id: this.id });
    this.#releaseWaiters();
  }

  delivered(n: number): void {
    this.#queued = Math.max(0, this.#queued - n);
    this.#maybeRelease();
  }

  #maybeRelease(): void {
    if (
      this.#roomWaiters.length > 0 &&
      this.#queued <= this.#options.queueLowWater &&
      this.#output <= this.#options.maxOutputInFlight / 2
    )
      this.#releaseWaiters();
  }

  faulted(reason: string, kind: "script" | "crash" = "script"): void {
    if (this.#disposed) return;
    this.#fault = reason;
    this.#disposed = true;
    this.#devices.clear();
    this.worker.sandboxes.delete(this.id);
    // The worker forgets what it keeps for the sandbox (its fault, output counts).
    this.worker.post({ t: "dispose", id: this.id });
    this.#releaseWaiters();
    this.host.fault(reason, kind);
  }

  #releaseWaiters(): void {
    for (const resolve of this.#roomWaiters.splice(0)) resolve();
  }
}

/**
 * The script workers: `workers` shared ones, and one more, started when first needed, for the
 * projects that ran over their CPU budget in the last `isolateForMs` (they never share a worker
 * with the others). A project is placed when its sandbox loads: the shared worker with the fewest
 * sandboxes, or the isolated one.
 */
export function scriptPool(options: PoolOptions & { isolateForMs?: number }) {
  const isolateForMs = options.isolateForMs ?? 10 * 60_000;
  const shared: (ScriptWorker | undefined)[] = Array.from({ length: Math.max(1, options.workers) });
  let isolated: ScriptWorker | undefined;
  /** Projects that ran over their budget, until when they stay isolated. */
  const overBudget = new Map<string, number>();
  let nextId = 1;
  let stopped = false;

  const onExit = (w: ScriptWorker) => {
    if (isolated === w) isolated = undefined;
    const i = shared.indexOf(w);
    if (i >= 0) shared[i] = undefined;
  };

  const isOverBudget = (projectId: string): boolean => {
    const until = overBudget.get(projectId);
    if (until === undefined) return false;
    if (until > Date.now()) return true;
    overBudget.delete(projectId);
    return false;
  };

  function workerFor(projectId: string): ScriptWorker {
    if (isOverBudget(projectId)) {
      isolated ??= new ScriptWorker(true, onExit);
      return isolated;
    }
    let best = 0;
    for (let i = 0; i < shared.length; i++) {
      if (!shared[i]) {
        best = i;
        break;
      }
      if (shared[i]!.sandboxes.size < shared[best]!.sandboxes.size) best = i;
    }
    shared[best] ??= new ScriptWorker(false, onExit);
    return shared[best]!;
  }

  return {
    /** Loads a bundle into a new sandbox in the project's worker. Throws ScriptLoadError. */
    async load(
      load: Omit<Extract<ToWorker, { t: "load" }>, "t" | "id" | "maxOutput" | "limits"> & {
        limits: Partial<SandboxLimits>;
      },
      host: RemoteHost,
    ): Promise<RemoteSandbox> {
      if (stopped) throw new Error("the script host has stopped");
      const worker = workerFor(load.projectId);
      const sandbox = new RemoteSandbox(nextId++, load.projectId, host, worker, options);
      await worker.load(sandbox, {
        ...load,
        t: "load",
        id: sandbox.id,
        maxOutput: options.maxOutputInFlight,
      });
      return sandbox;
    },

    /** The project ran over its CPU budget, to an entry's deadline or into a fault: it loads into the isolated worker from now on. */
    markOverBudget(projectId: string): void {
      overBudget.set(projectId, Date.now() + isolateForMs);
    },

    /** Loads may start workers again (after `stop`). */
    resume(): void {
      stopped = false;
    },

    /** Ends every worker; loads fail until `resume`. */
    stop(): void {
      stopped = true;
      for (const w of [...shared, isolated]) w?.terminate();
      shared.fill(undefined);
      isolated = undefined;
    },
  };
}
