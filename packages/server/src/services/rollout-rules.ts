import type { HealthCounts, HealthWatch } from "./script-health.ts";

/** How much worse than the stable version a canary may do before it is rolled back. */
const canaryThresholds = {
  /** (errors + timeouts) / calls above the stable rate plus this, with at least `minFailures`. */
  failureRateMargin: 0.05,
  minFailures: 3,
  /** commandErrors / commands above the stable rate plus this, with at least `minCommandErrors`. */
  commandErrorRateMargin: 0.1,
  minCommandErrors: 3,
  /**
   * Share of the canary's devices that disconnected at least `disconnectsPerDevice` times, above
   * the stable share plus this (at least one such device): one reconnect (a Wi-Fi blip, a reboot)
   * is not held against a version.
   */
  disconnectShareMargin: 0.25,
  disconnectsPerDevice: 2,
} as const;

const pct = (n: number) => `${Math.round(n * 100)} %`;
const rate = (part: number, whole: number) => (whole > 0 ? part / whole : 0);

/** Devices of this side that disconnected at least `disconnectsPerDevice` times. */
const flappingDevices = (h: HealthCounts) =>
  [...h.disconnected.values()].filter((n) => n >= canaryThresholds.disconnectsPerDevice).length;

/** Every onDeviceConnect of this side threw (at least one ran): a crash loop. */
export function crashLoop(h: HealthCounts): string | null {
  if (h.connects < 1 || h.connectErrors < h.connects) return null;
  return `every onDeviceConnect threw (${h.connectErrors} of ${h.connects})`;
}

/**
 * Why a canary must be rolled back now, from the health counted since its window started, or null
 * while it is inside the thresholds.
 */
export function canaryVerdict(health: HealthWatch): string | null {
  const { canary: c, stable: s } = health;
  const loop = crashLoop(c);
  if (loop) return `rolled back: ${loop} on the canary's devices`;
  const failures = c.errors + c.timeouts;
  const calls = Math.max(c.calls, failures);
  const stableFailures = s.errors + s.timeouts;
  const stableCalls = Math.max(s.calls, stableFailures);
  if (
    failures >= canaryThresholds.minFailures &&
    rate(failures, calls) > rate(stableFailures, stableCalls) + canaryThresholds.failureRateMargin
  )
    return `rolled back: ${failures} of ${calls} handler calls failed (${pct(rate(failures, calls))}) against ${stableFailures} of ${stableCalls} (${pct(rate(stableFailures, stableCalls))}) on the stable version`;
  const commands = Math.max(c.commands, c.commandErrors);
  const stableCommands = Math.max(s.commands, s.commandErrors);
  if (
    c.commandErrors >= canaryThresholds.minCommandErrors &&
    rate(c.commandErrors, commands) >
      rate(s.commandErrors, stableCommands) + canaryThresholds.commandErrorRateMargin
  )
    return `rolled back: ${c.commandErrors} of ${commands} commands failed (${pct(rate(c.commandErrors, commands))}) against ${s.commandErrors} of ${stableCommands} (${pct(rate(s.commandErrors, stableCommands))}) on the stable version`;
  const flapping = flappingDevices(c);
  const stableFlapping = flappingDevices(s);
  const devices = Math.max(c.devices.size, flapping, 1);
  const share = flapping / devices;
  const stableShare = rate(stableFlapping, Math.max(s.devices.size, stableFlapping));
  if (flapping >= 1 && share > stableShare + canaryThresholds.disconnectShareMargin)
    return `rolled back: ${flapping} of ${devices} canary device${devices === 1 ? "" : "s"} disconnected ${canaryThresholds.disconnectsPerDevice} times or more (${pct(share)}) against ${stableFlapping} of ${s.devices.size} (${pct(stableShare)}) on the stable version`;
  return null;
}

/** A uniformly random order (Fisher–Yates). */
export function shuffled<T>(items: readonly T[]): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}
