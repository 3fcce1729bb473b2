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
import type { GuestError } from "./errors.ts";

type WasmMemory = ReturnType<QuickJSWASMModule["getWasmMemory"]>;
type CompiledWasm = unknown;
interface WasmApi {
  compile(bytes: Uint8Array): Promise<CompiledWasm>;
  Memory: new (descriptor: { initial: number; maximum: number }) => WasmMemory;
}
const wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;
const wasmPage = 64 * 1024;
const guestStackBytes = 256 * 1024;
let compiled: Promise<CompiledWasm> | undefined;

/** QuickJS compiled once per process; each project instantiates it with a memory of its own. */
function compiledQuickJS(): Promise<CompiledWasm> {
  compiled ??= (async () => {
    const pkg = createRequire(import.meta.url).resolve("@jitl/quickjs-wasmfile-release-sync/package.json");
    return wasm.compile(await fs.readFile(path.join(path.dirname(pkg), "dist", "emscripten-module.wasm")));
  })();
  return compiled;
}

/**
 * A project's QuickJS instance: a WebAssembly memory that cannot grow past the cap (an allocation
 * over it fails inside the guest, "out of memory", instead of growing the heap), one runtime and
 * one context.
 */
export class ProjectModule {
  readonly runtime: QuickJSRuntime;
  readonly ctx: QuickJSContext;
  readonly #capBytes: number;
  readonly #module: QuickJSWASMModule;
  #disposed = false;

  private constructor(module: QuickJSWASMModule, capBytes: number) {
    this.#module = module;
    this.#capBytes = capBytes;
    this.runtime = module.newRuntime();
    // Small enough that QuickJS reports "stack overflow" before the host's own stack runs out.
    this.runtime.setMaxStackSize(guestStackBytes);
    // QuickJS counts its own allocations against this; `full` catches the rest.
    this.runtime.setMemoryLimit(capBytes);
    this.ctx = this.runtime.newContext();
  }

  static async create(capBytes: number): Promise<ProjectModule> {
    const maximum = Math.max(2, Math.ceil(capBytes / wasmPage));
    const wasmMemory = new wasm.Memory({ initial: Math.min(256, maximum), maximum });
    const variant = newVariant(releaseSync as unknown as QuickJSSyncVariant, {
      wasmModule: (await compiledQuickJS()) as never,
      wasmMemory,
    });
    return new ProjectModule(await newQuickJSWASMModuleFromVariant(variant), capBytes);
  }

  /** The size of the WebAssembly memory (it grows, and never shrinks). */
  get memoryBytes(): number {
    return this.#module.getWasmMemory().buffer.byteLength;
  }

  /** The memory reached the cap: the next allocation may fail anywhere. */
  get full(): boolean {
    return this.memoryBytes >= this.#capBytes;
  }

  get disposed(): boolean {
    return this.#disposed;
  }

  /** Copies a guest error out and frees its handle. */
  takeError(handle: QuickJSHandle): GuestError {
    try {
      const value = this.ctx.dump(handle) as GuestError | string;
      return typeof value === "object" && value !== null ? value : { name: "Error", message: String(value) };
    } finally {
      handle.dispose();
    }
  }

  /**
   * Drops the module without freeing anything in it: after the host's stack ran out inside the wasm,
   * QuickJS's own bookkeeping is half-way through a call and freeing would abort. Its memory is
   * the project's alone and goes with the last reference.
   */
  abandon(): void {
    this.#disposed = true;
  }

  /** Frees the context and runtime; `release` frees handles that belong to them first. */
  dispose(release: () => void = () => {}): void {
    if (this.#disposed) return;
    this.#disposed = true;
    try {
      release();
      this.ctx.dispose();
      this.runtime.dispose();
    } catch {
      // A module stopped mid-way (memory fault) may not free cleanly; it is dropped either way.
    }
  }
}
