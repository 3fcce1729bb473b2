/**
 * How a sandbox waits: the host's timers by default. `sdk test` passes a virtual clock instead, so a
 * replayed recording runs its script's timers in order without waiting for them.
 */
export interface Scheduler {
  setTimeout(fn: () => void, ms: number): unknown;
  setInterval(fn: () => void, ms: number): unknown;
  /** Cancels a timeout or an interval (as `clearTimeout` does both in Node.js). */
  clear(handle: unknown): void;
}

/** Node.js's own timers. */
export const realScheduler: Scheduler = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  setInterval: (fn, ms) => setInterval(fn, ms),
  clear: (handle) => clearTimeout(handle as NodeJS.Timeout | undefined),
};
