import type {
  GuestEntryName,
  GuestEntryPoints,
  GuestHostFunctionName,
  GuestHostFunctions,
} from "@sdk/device/abi";
import { guestHostGlobal } from "@sdk/device/abi";
import type { QuickJSContext, QuickJSHandle } from "quickjs-emscripten-core";
import { ScriptLoadError } from "./errors.ts";

/** The guest called a host function with arguments the ABI does not allow; it is thrown in the guest. */
export class GuestAbiError extends TypeError {
  constructor(message: string) {
    super(message);
    this.name = "GuestAbiError";
  }
}

type Primitive = string | number | boolean;
type KindOf<T> = T extends string
  ? "string"
  : T extends number
    ? "number"
    : T extends boolean
      ? "boolean"
      : never;
type Kinds<P extends readonly unknown[]> = { [I in keyof P]: KindOf<P[I]> };

const signatures: { [K in GuestHostFunctionName]: Kinds<Parameters<GuestHostFunctions[K]>> } = {
  command: ["string", "number", "string", "string"],
  emitState: ["string", "string", "string"],
  send: ["string", "string"],
  log: ["string", "string", "string"],
  error: ["string", "string"],
  setTimer: ["string", "number", "number", "boolean"],
  clearTimer: ["string", "number"],
};

const entryNames: Record<GuestEntryName, true> = {
  create: true,
  connect: true,
  message: true,
  disconnect: true,
  fire: true,
  settle: true,
  setEnv: true,
  count: true,
};

/** Parses a JSON argument of a host function; bad JSON is the guest's error, not the host's. */
export function guestJson(fn: GuestHostFunctionName, name: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new GuestAbiError(`${guestHostGlobal}.${fn}: ${name} is not valid JSON`);
  }
}

/** Like `guestJson`, for arguments that must be a JSON object. */
export function guestJsonObject(
  fn: GuestHostFunctionName,
  name: string,
  text: string,
): Record<string, unknown> {
  const value = guestJson(fn, name, text);
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new GuestAbiError(`${guestHostGlobal}.${fn}: ${name} must be a JSON object`);
  }
  return value as Record<string, unknown>;
}

function unmarshal(ctx: QuickJSContext, fn: GuestHostFunctionName, handles: QuickJSHandle[]): Primitive[] {
  const kinds = signatures[fn] as readonly string[];
  if (handles.length < kinds.length) {
    throw new GuestAbiError(
      `${guestHostGlobal}.${fn}: expects ${kinds.length} arguments (${kinds.join(", ")}), got ${handles.length}`,
    );
  }
  return kinds.map((kind, i) => {
    const handle = handles[i]!;
    const actual = ctx.typeof(handle);
    if (actual !== kind) {
      throw new GuestAbiError(`${guestHostGlobal}.${fn}: argument ${i + 1} must be a ${kind}, got ${actual}`);
    }
    return kind === "string"
      ? ctx.getString(handle)
      : kind === "number"
        ? ctx.getNumber(handle)
        : ctx.dump(handle);
  });
}

/**
 * Installs the guest host as `globalThis[guestHostGlobal]`. Arguments are checked against the ABI
 * before `functions` sees them; anything a function throws is thrown in the guest, never in the host.
 */
export function installGuestHost(
  ctx: QuickJSContext,
  functions: GuestHostFunctions,
  docsBaseUrl: string,
): void {
  const host = ctx.newObject();
  for (const fn of Object.keys(signatures) as GuestHostFunctionName[]) {
    const handle = ctx.newFunction(fn, (...handles) => {
      const args = unmarshal(ctx, fn, handles);
      (functions[fn] as (...a: Primitive[]) => void)(...args);
    });
    ctx.setProp(host, fn, handle);
    handle.dispose();
  }
  const base = ctx.newString(docsBaseUrl);
  ctx.setProp(host, "docsBaseUrl", base);
  base.dispose();
  ctx.setProp(ctx.global, guestHostGlobal, host);
  host.dispose();
}

/** The bundle's entry points (its default export), called with arguments marshalled by the ABI. */
export class GuestEntries {
  readonly #ctx: QuickJSContext;
  readonly #fns: Map<GuestEntryName, QuickJSHandle>;

  private constructor(ctx: QuickJSContext, fns: Map<GuestEntryName, QuickJSHandle>) {
    this.#ctx = ctx;
    this.#fns = fns;
  }

  /** Takes the entry points off the default export; frees `exported`. Throws ScriptLoadError. */
  static take(ctx: QuickJSContext, exported: QuickJSHandle): GuestEntries {
    const fns = new Map<GuestEntryName, QuickJSHandle>();
    try {
      for (const name of Object.keys(entryNames) as GuestEntryName[]) {
        const fn = ctx.getProp(exported, name);
        if (ctx.typeof(fn) !== "function") {
          fn.dispose();
          throw new ScriptLoadError("the bundle was not built by `sdk build` (its entry points are missing)");
        }
        fns.set(name, fn);
      }
    } catch (error) {
      for (const fn of fns.values()) fn.dispose();
      throw error;
    } finally {
      exported.dispose();
    }
    return new GuestEntries(ctx, fns);
  }

  /** Calls an entry point; the caller frees the result. */
  call<K extends GuestEntryName>(name: K, args: Parameters<GuestEntryPoints[K]>) {
    const ctx = this.#ctx;
    const handles = (args as Primitive[]).map((a) =>
      typeof a === "string"
        ? ctx.newString(a)
        : typeof a === "number"
          ? ctx.newNumber(a)
          : a
            ? ctx.true
            : ctx.false,
    );
    try {
      return ctx.callFunction(this.#fns.get(name)!, ctx.undefined, ...handles);
    } finally {
      for (const h of handles) h.dispose();
    }
  }

  dispose(): void {
    for (const fn of this.#fns.values()) fn.dispose();
    this.#fns.clear();
  }
}
