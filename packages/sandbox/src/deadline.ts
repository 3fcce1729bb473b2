import type { QuickJSRuntime } from "quickjs-emscripten-core";

/**
 * Milliseconds of CPU time this thread has used. The guest cannot wait on anything, so this is the
 * time it ran: a busy machine that deschedules the server does not eat into a script's deadline.
 */
const runningMs: () => number =
  typeof process.threadCpuUsage === "function"
    ? () => {
        const { user, system } = process.threadCpuUsage();
        return (user + system) / 1000;
      }
    : () => performance.now();

/** Interrupts the guest once the current entry has run past its time (QuickJS asks every few thousand steps). */
export class Deadline {
  #at = Number.POSITIVE_INFINITY;
  #expired = false;
  #lastRunMs = 0;

  constructor(runtime: QuickJSRuntime) {
    runtime.setInterruptHandler(() => {
      if (runningMs() <= this.#at) return false;
      this.#expired = true;
      return true;
    });
  }

  /** Runs `fn` with the guest interrupted once it has run for `ms`. */
  run<T>(ms: number, fn: () => T): T {
    this.#expired = false;
    const start = runningMs();
    this.#at = start + ms;
    try {
      return fn();
    } finally {
      this.#at = Number.POSITIVE_INFINITY;
      this.#lastRunMs = runningMs() - start;
    }
  }

  /** CPU time the last run took. */
  get lastRunMs(): number {
    return this.#lastRunMs;
  }

  /** The last run was interrupted, even if the guest caught the interrupt. */
  get expired(): boolean {
    return this.#expired;
  }
}
