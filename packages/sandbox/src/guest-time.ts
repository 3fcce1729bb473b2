import type { QuickJSContext } from "quickjs-emscripten-core";

/**
 * The time and randomness a script sees, when the host decides them (`sdk test`): `Date.now()`,
 * `new Date()` and `Date()` read `now()`, and `Math.random()` is a PRNG seeded with `seed`, so a
 * replay gives the same values every run. Without it, scripts see the real time and randomness.
 */
export interface GuestTime {
  /** Milliseconds since the epoch, as the script's `Date.now()` returns them. */
  now(): number;
  /** Seeds `Math.random()` (a 32-bit integer). */
  seed: number;
}

/** Replaces `Date` (the same prototype: `instanceof Date` holds) and `Math.random` (mulberry32). */
const prelude = `(function (hostNow, seed) {
  "use strict";
  const RealDate = Date;
  function VirtualDate(...args) {
    if (!new.target) return new RealDate(hostNow()).toString();
    return Reflect.construct(RealDate, args.length === 0 ? [hostNow()] : args, new.target);
  }
  Object.defineProperty(VirtualDate, "name", { value: "Date" });
  VirtualDate.prototype = RealDate.prototype;
  Object.defineProperty(RealDate.prototype, "constructor", { value: VirtualDate, writable: true, configurable: true });
  VirtualDate.now = function now() { return hostNow(); };
  VirtualDate.parse = RealDate.parse;
  VirtualDate.UTC = RealDate.UTC;
  Object.defineProperty(globalThis, "Date", { value: VirtualDate, writable: true, configurable: true });
  let state = seed >>> 0;
  Math.random = function random() {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
})`;

/** Installs `time` in the context, before the bundle is evaluated. */
export function installGuestTime(ctx: QuickJSContext, time: GuestTime): void {
  const install = ctx.unwrapResult(ctx.evalCode(prelude, "guest-time.js"));
  const now = ctx.newFunction("now", () => ctx.newNumber(time.now()));
  const seed = ctx.newNumber(time.seed >>> 0);
  try {
    ctx.unwrapResult(ctx.callFunction(install, ctx.undefined, now, seed)).dispose();
  } finally {
    for (const handle of [install, now, seed]) handle.dispose();
  }
}
