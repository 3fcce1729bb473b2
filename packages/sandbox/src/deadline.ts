import type { QuickJSRuntime } from "quickjs-emscripten-core";

/** Interrupts the guest when the current entry runs past its time (QuickJS asks every few thousand steps). */
export class Deadline {
  #at = Number.POSITIVE_INFINITY;
  #expired = false;

  constructor(runtime: QuickJSRuntime) {
    runtime.setInterruptHandler(() => {
      if (performance.now() <= this.#at) return false;
      this.#expired = true;
      return true;
    });
  }

  /** Runs `fn` with the guest interrupted once `ms` have passed. */
  run<T>(ms: number, fn: () => T): T {
    this.#expired = false;
    this.#at = performance.now() + ms;
    try {
      return fn();
    } finally {
      this.#at = Number.POSITIVE_INFINITY;
    }
  }

  /** The last run was interrupted, even if the guest caught the interrupt. */
  get expired(): boolean {
    return this.#expired;
  }
}
