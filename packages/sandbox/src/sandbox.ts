import fs from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import releaseSync from "@jitl/quickjs-wasmfile-release-sync";
import {
  newQuickJSWASMModuleFromVariant,
  newVariant,
  type QuickJSContext,
  type QuickJSHandle,
  type QuickJSRuntime,
  type QuickJSSyncVariant,
  type QuickJSWASMModule,
} from "quickjs-emscripten-core";
import { SourceMapper } from "./source-map.ts";

type WasmMemory = ReturnType<QuickJSWASMModule["getWasmMemory"]>;
type WasmModule = unknown;
interface WasmApi {
  compile(bytes: Uint8Array): Promise<WasmModule>;
  Memory: new (descriptor: { initial: number; maximum: number }) => WasmMemory;
}
const wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;
const wasmPage = 64 * 1024;
let compiled: Promise<WasmModule> | undefined;

/** QuickJS compiled once per process; each project instantiates it with a memory of its own. */
function compiledQuickJS(): Promise<WasmModule> {
  compiled ??= (async () => {
    const pkg = createRequire(import.meta.url).resolve("@jitl/quickjs-wasmfile-release-sync/package.json");
    return wasm.compile(await fs.readFile(path.join(path.dirname(pkg), "dist", "emscripten-module.wasm")));
  })();
  return compiled;
}

/**
 * A project's module, with a WebAssembly memory that cannot grow past the cap: an allocation over
 * it fails inside the guest ("out of memory") instead of growing the heap.
 */
async function newProjectModule(memoryBytes: number): Promise<QuickJSWASMModule> {
  const maximum = Math.max(2, Math.ceil(memoryBytes / wasmPage));
  const wasmMemory = new wasm.Memory({ initial: Math.min(256, maximum), maximum });
  const projectVariant = newVariant(releaseSync as unknown as QuickJSSyncVariant, {
    wasmModule: (await compiledQuickJS()) as never,
    wasmMemory,
  });
  return newQuickJSWASMModuleFromVariant(projectVariant);
}

/** The exact text logged when a handler, timer or promise job runs past its deadline. */
export const scriptTimeoutMessage = "Script execution timeout";

export type Level = "debug" | "info" | "warn" | "error";

/** What a sandbox needs from the server. */
export interface SandboxHost {
  /** Sends a device command; resolves with the result or rejects with `{ code, message }`. */
  command(deviceId: string, type: string, args: Record<string, unknown>): Promise<unknown>;
  emitState(deviceId: string, entityId: string, value: unknown): void;
  send(deviceId: string, message: Record<string, unknown>): void;
  log(deviceId: string, level: Level, message: string): void;
}

export interface SandboxLimits {
  /** Deadline of every entry into the guest (a handler call, a timer, a command result). */
  timeoutMs: number;
  /** Deadline of evaluating the bundle at load. */
  loadTimeoutMs: number;
  /** The project's WebAssembly memory may not grow past this. */
  memoryBytes: number;
  maxTimersPerDevice: number;
  minTimerMs: number;
}

export const defaultLimits: SandboxLimits = {
  timeoutMs: 100,
  loadTimeoutMs: 1000,
  memoryBytes: 64 * 1024 * 1024,
  maxTimersPerDevice: 64,
  minTimerMs: 10,
};

export interface LoadOptions {
  projectId: string;
  bundle: string;
  sourceMap?: string;
  env: Record<string, string>;
  host: SandboxHost;
  limits?: Partial<SandboxLimits>;
  /** The sandbox stopped itself (memory over the cap); it is disposed and must be reloaded. */
  onFault?: (reason: string) => void;
}

/** The bundle failed to load (a syntax error, an exception at top level, a wrong default export). */
export class ScriptLoadError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ScriptLoadError";
  }
}

type EntryName = "create" | "connect" | "message" | "disconnect" | "fire" | "settle" | "setEnv" | "count";
const entryNames: EntryName[] = [
  "create",
  "connect",
  "message",
  "disconnect",
  "fire",
  "settle",
  "setEnv",
  "count",
];

interface DumpedError {
  name?: string;
  message?: string;
  stack?: string;
}

const isInterrupt = (e: DumpedError) => e?.name === "InternalError" && e.message === "interrupted";

/**
 * One project's scripts: a QuickJS WebAssembly module of its own (so projects cannot see or starve
 * each other's memory), one context evaluating the deployed bundle, and one instance of the
 * script's class per attached device. Every entry into the guest runs under a deadline.
 */
export class ProjectSandbox {
  readonly projectId: string;
  readonly #module: QuickJSWASMModule;
  readonly #runtime: QuickJSRuntime;
  readonly #ctx: QuickJSContext;
  readonly #host: SandboxHost;
  readonly #limits: SandboxLimits;
  readonly #mapper: SourceMapper;
  readonly #onFault?: (reason: string) => void;
  readonly #entries = new Map<EntryName, QuickJSHandle>();
  readonly #devices = new Map<string, { timers: Map<number, NodeJS.Timeout> }>();
  #deadline = Number.POSITIVE_INFINITY;
  /** Set by the interrupt handler: the current entry ran past its deadline. */
  #timedOut = false;
  /** An allocation failed in the guest, even if the script caught the error. */
  #outOfMemoryReported = false;
  #disposed = false;
  #env: Record<string, string>;

  private constructor(module: QuickJSWASMModule, options: LoadOptions, limits: SandboxLimits) {
    this.projectId = options.projectId;
    this.#module = module;
    this.#host = options.host;
    this.#limits = limits;
    this.#onFault = options.onFault;
    this.#env = options.env;
    this.#mapper = new SourceMapper(options.sourceMap);
    this.#runtime = module.newRuntime();
    this.#runtime.setMaxStackSize(1024 * 1024);
    // QuickJS counts its own allocations against this; the wasm memory check below catches the rest.
    this.#runtime.setMemoryLimit(limits.memoryBytes);
    this.#runtime.setInterruptHandler(() => {
      if (performance.now() > this.#deadline) {
        this.#timedOut = true;
        return true;
      }
      return false;
    });
    this.#ctx = this.#runtime.newContext();
    this.#installHost();
  }

  /** Creates the project's module and evaluates the bundle. Throws `ScriptLoadError`. */
  static async load(options: LoadOptions): Promise<ProjectSandbox> {
    const limits = { ...defaultLimits, ...options.limits };
    const module = await newProjectModule(limits.memoryBytes);
    const sandbox = new ProjectSandbox(module, options, limits);
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
    return this.#module.getWasmMemory().buffer.byteLength;
  }

  get disposed(): boolean {
    return this.#disposed;
  }

  /** Devices with an instance of the script. */
  get devices(): string[] {
    return [...this.#devices.keys()];
  }

  /** Creates the device's instance and calls `onDeviceConnect`. */
  attach(deviceId: string, board: string): void {
    if (this.#disposed || this.#devices.has(deviceId)) return;
    this.#devices.set(deviceId, { timers: new Map() });
    const projectId = this.projectId;
    if (this.#enter(deviceId, "create", [deviceId, projectId, board, JSON.stringify(this.#env)])) {
      this.#enter(deviceId, "connect", [deviceId]);
    }
  }

  /** Calls `onMessage` of the device's instance. */
  deliver(deviceId: string, message: Record<string, unknown>): boolean {
    if (this.#disposed || !this.#devices.has(deviceId)) return false;
    this.#enter(deviceId, "message", [deviceId, JSON.stringify(message)]);
    return true;
  }

  /** Calls `onDeviceDisconnect`, clears the instance's timers and drops it. */
  detach(deviceId: string): void {
    const device = this.#devices.get(deviceId);
    if (!device) return;
    this.#enter(deviceId, "disconnect", [deviceId]);
    for (const timer of device.timers.values()) clearTimeout(timer);
    this.#devices.delete(deviceId);
  }

  /** New env var values reach every running instance (`this.env`). */
  setEnv(env: Record<string, string>): void {
    this.#env = env;
    if (!this.#disposed) this.#enter(null, "setEnv", [JSON.stringify(env)]);
  }

  /** Stops every timer and frees the module. Instances get no disconnect call. */
  dispose(): void {
    if (this.#disposed) return;
    this.#disposed = true;
    for (const device of this.#devices.values())
      for (const timer of device.timers.values()) clearTimeout(timer);
    this.#devices.clear();
    try {
      for (const handle of this.#entries.values()) handle.dispose();
      this.#entries.clear();
      this.#ctx.dispose();
      this.#runtime.dispose();
    } catch {
      // A module stopped mid-way (memory fault) may not free cleanly; it is dropped either way.
    }
  }

  #evaluate(bundle: string): void {
    this.#deadline = performance.now() + this.#limits.loadTimeoutMs;
    try {
      const result = this.#ctx.evalCode(bundle, "script.js", { type: "module" });
      if (result.error)
        throw new ScriptLoadError(this.#describe(this.#dump(result.error), "the script failed to load"));
      let namespace = result.value;
      const jobs = this.#runtime.executePendingJobs();
      if (jobs.error) {
        namespace.dispose();
        throw new ScriptLoadError(this.#describe(this.#dump(jobs.error), "the script failed to load"));
      }
      const state = this.#ctx.getPromiseState(namespace);
      if (state.type === "fulfilled") {
        if (!state.notAPromise) {
          namespace.dispose();
          namespace = state.value;
        }
      } else if (state.type === "rejected") {
        namespace.dispose();
        throw new ScriptLoadError(this.#describe(this.#dump(state.error), "the script failed to load"));
      }
      const runtime = this.#ctx.getProp(namespace, "default");
      namespace.dispose();
      try {
        for (const name of entryNames) {
          const fn = this.#ctx.getProp(runtime, name);
          if (this.#ctx.typeof(fn) !== "function") {
            fn.dispose();
            throw new ScriptLoadError(
              "the bundle was not built by `sdk build` (its entry points are missing)",
            );
          }
          this.#entries.set(name, fn);
        }
      } finally {
        runtime.dispose();
      }
    } finally {
      this.#deadline = Number.POSITIVE_INFINITY;
    }
    if (this.memoryBytes >= this.#limits.memoryBytes) {
      throw new ScriptLoadError(
        `the script used more than ${this.#limits.memoryBytes >> 20} MB while loading`,
      );
    }
  }

  /** Runs one entry point and then the promise jobs it queued, under the deadline. */
  #enter(deviceId: string | null, name: EntryName, args: (string | number | boolean)[]): boolean {
    if (this.#disposed) return false;
    const ctx = this.#ctx;
    const fn = this.#entries.get(name)!;
    const handles = args.map((a) =>
      typeof a === "string"
        ? ctx.newString(a)
        : typeof a === "number"
          ? ctx.newNumber(a)
          : a
            ? ctx.true
            : ctx.false,
    );
    let error: DumpedError | null = null;
    this.#timedOut = false;
    this.#deadline = performance.now() + this.#limits.timeoutMs;
    try {
      const result = ctx.callFunction(fn, ctx.undefined, ...handles);
      if (result.error) error = this.#dump(result.error);
      else result.value.dispose();
      if (!error && !this.#disposed) {
        const jobs = this.#runtime.executePendingJobs();
        if (jobs.error) error = this.#dump(jobs.error);
      }
    } finally {
      this.#deadline = Number.POSITIVE_INFINITY;
      for (const h of handles) h.dispose();
    }
    if (this.#outOfMemory(error)) {
      this.#fault(
        `memory limit exceeded: the project's scripts reached the ${(this.#limits.memoryBytes / 1048576).toFixed(0)} MB cap`,
      );
      return false;
    }
    // A timeout is reported even when the guest swallowed the interrupt (an async function's
    // rejected promise, a try/catch around a loop).
    if (error || this.#timedOut) {
      const target = deviceId ?? this.#devices.keys().next().value;
      const text =
        this.#timedOut || (error && isInterrupt(error))
          ? scriptTimeoutMessage
          : this.#describe(error!, "the script failed");
      if (target !== undefined) this.#host.log(target, "error", text);
      return false;
    }
    return true;
  }

  /** The guest hit the memory cap: an allocation failed, or the heap is full. */
  #outOfMemory(error: DumpedError | null): boolean {
    if (this.#outOfMemoryReported) return true;
    if (error?.name === "InternalError" && error.message === "out of memory") return true;
    return this.memoryBytes >= this.#limits.memoryBytes;
  }

  #fault(reason: string): void {
    const devices = this.devices;
    for (const deviceId of devices)
      this.#host.log(deviceId, "error", `${reason}; the project's scripts were stopped and will restart`);
    this.dispose();
    this.#onFault?.(reason);
  }

  #dump(handle: QuickJSHandle): DumpedError {
    try {
      const value = this.#ctx.dump(handle) as DumpedError | string;
      return typeof value === "object" && value !== null ? value : { name: "Error", message: String(value) };
    } finally {
      handle.dispose();
    }
  }

  #describe(error: DumpedError, fallback: string): string {
    if (isInterrupt(error)) return scriptTimeoutMessage;
    const head = `${error.name ?? "Error"}: ${error.message ?? fallback}`;
    return error.stack ? `${head}\n${this.#mapper.mapStack(error.stack)}` : head;
  }

  /** The functions the guest runtime calls (`__sdk_host`). They only act for attached devices. */
  #installHost(): void {
    const ctx = this.#ctx;
    const host = ctx.newObject();
    const str = (h: QuickJSHandle) => ctx.getString(h);
    const num = (h: QuickJSHandle) => ctx.getNumber(h);
    const attached = (deviceId: string) => {
      if (!this.#devices.has(deviceId))
        throw new Error(`device ${deviceId} is not attached to this project's scripts`);
      return this.#devices.get(deviceId)!;
    };
    const fns: Record<string, (...args: QuickJSHandle[]) => QuickJSHandle | undefined> = {
      command: (d, id, type, args) => {
        const deviceId = str(d);
        attached(deviceId);
        const commandId = num(id);
        this.#host.command(deviceId, str(type), JSON.parse(str(args)) as Record<string, unknown>).then(
          (value) => this.#settle(deviceId, commandId, true, JSON.stringify(value ?? null)),
          (error: { code?: string; message?: string }) =>
            this.#settle(
              deviceId,
              commandId,
              false,
              JSON.stringify({
                code: error?.code ?? "device_error",
                message: error?.message ?? String(error),
              }),
            ),
        );
        return undefined;
      },
      emitState: (d, entity, value) => {
        const deviceId = str(d);
        attached(deviceId);
        this.#host.emitState(deviceId, str(entity), JSON.parse(str(value)));
        return undefined;
      },
      send: (d, message) => {
        const deviceId = str(d);
        attached(deviceId);
        this.#host.send(deviceId, JSON.parse(str(message)) as Record<string, unknown>);
        return undefined;
      },
      log: (d, level, text) => {
        const deviceId = str(d);
        if (this.#devices.has(deviceId)) this.#host.log(deviceId, str(level) as Level, str(text));
        return undefined;
      },
      error: (d, stack) => {
        const deviceId = str(d);
        // An interrupt the guest caught and reported is logged once, by #enter, as a timeout.
        if (this.#timedOut || str(stack).startsWith("InternalError: interrupted")) return undefined;
        if (str(stack).startsWith("InternalError: out of memory")) {
          this.#outOfMemoryReported = true;
          return undefined;
        }
        if (this.#devices.has(deviceId)) this.#host.log(deviceId, "error", this.#mapper.mapStack(str(stack)));
        return undefined;
      },
      setTimer: (d, id, delay, repeat) => {
        const deviceId = str(d);
        const device = attached(deviceId);
        if (device.timers.size >= this.#limits.maxTimersPerDevice) {
          throw new RangeError(`too many timers: at most ${this.#limits.maxTimersPerDevice} per device`);
        }
        const timerId = num(id);
        const ms = Math.max(this.#limits.minTimerMs, Math.min(num(delay) || 0, 2 ** 31 - 1));
        const run = () => this.#enter(deviceId, "fire", [deviceId, timerId]);
        const timer =
          ctx.dump(repeat) === true
            ? setInterval(run, ms)
            : setTimeout(() => {
                device.timers.delete(timerId);
                run();
              }, ms);
        device.timers.set(timerId, timer);
        return undefined;
      },
      clearTimer: (d, id) => {
        const device = this.#devices.get(str(d));
        const timerId = num(id);
        const timer = device?.timers.get(timerId);
        if (timer) {
          clearTimeout(timer);
          device!.timers.delete(timerId);
        }
        return undefined;
      },
    };
    for (const [name, fn] of Object.entries(fns)) {
      const handle = ctx.newFunction(name, fn);
      ctx.setProp(host, name, handle);
      handle.dispose();
    }
    ctx.setProp(ctx.global, "__sdk_host", host);
    host.dispose();
  }

  #settle(deviceId: string, commandId: number, ok: boolean, json: string): void {
    if (this.#disposed || !this.#devices.has(deviceId)) return;
    this.#enter(deviceId, "settle", [deviceId, commandId, ok, json]);
  }
}
