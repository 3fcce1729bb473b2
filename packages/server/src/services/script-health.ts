import type { RolloutHealth } from "@sdk/protocol";

/**
 * What the script host counts for one side of a rollout: the devices seen (a set), and how many
 * times each device disconnected (`disconnects` counts every disconnect).
 */
export interface HealthCounts extends Omit<RolloutHealth, "devices"> {
  devices: Set<string>;
  disconnected: Map<string, number>;
}

/**
 * What a rollout watches: a canary (`canaryId`) against the stable deployment (`stableId`), or a
 * plain deploy alone (`canaryId` null, `stableId` the new live deployment). Counted from its start.
 */
export interface HealthWatch {
  canaryId: string | null;
  stableId: string | null;
  canary: HealthCounts;
  stable: HealthCounts;
}

export const newHealthCounts = (): HealthCounts => ({
  devices: new Set(),
  disconnected: new Map(),
  calls: 0,
  errors: 0,
  timeouts: 0,
  connects: 0,
  connectErrors: 0,
  disconnects: 0,
  commands: 0,
  commandErrors: 0,
});

export const healthView = ({ devices, disconnected: _, ...counts }: HealthCounts): RolloutHealth => ({
  devices: devices.size,
  ...counts,
});

/**
 * Entries whose failure counts against the script's health (not onDeviceDisconnect, which also runs
 * when an instance moves between versions, and not env updates). The `script_errors` alert rule
 * leaves onDeviceDisconnect out too (`countsAsScriptError`).
 */
const healthEntries = new Set(["create", "connect", "message", "fire", "settle"]);

/** A failed entry counts towards the `script_errors` alert rule (the same entries as health). */
export const countsAsScriptError = (entry: string | undefined): boolean =>
  entry === undefined || healthEntries.has(entry);

/** Counts entries the worker reported. */
export const countCalls = (calls: number, connects: number) => (h: HealthCounts) => {
  h.calls += calls;
  h.connects += connects;
};

/** Counts one failed entry (`entry` undefined: the worker did not say; counted as a handler call). */
export function countFailure(h: HealthCounts, kind: "error" | "timeout", entry: string | undefined): void {
  if (entry !== undefined && !healthEntries.has(entry)) return;
  if (kind === "timeout") h.timeouts++;
  else h.errors++;
  if (entry === "create" || entry === "connect") h.connectErrors++;
}

/** The health counts of a deployment's side while a rollout watches it. */
export function sideOf(h: HealthWatch | undefined, deploymentId: string): HealthCounts | undefined {
  if (!h) return undefined;
  if (h.canaryId === deploymentId) return h.canary;
  return h.stableId === deploymentId ? h.stable : undefined;
}

/** Hooks the rollouts service sets: health changed (thresholds may be crossed), a canary's sandbox stopped itself. */
export interface RolloutHooks {
  changed(projectId: string): void;
  canaryFaulted(projectId: string, deploymentId: string, reason: string): void;
}
