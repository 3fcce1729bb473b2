/**
 * A project's CPU budget: at most `ms` milliseconds of guest time in each window of `windowMs`
 * (wall clock). Once spent, the project's timers, messages and command results wait for the next window.
 */
export class CpuBudget {
  readonly ms: number;
  readonly windowMs: number;
  #windowStart = performance.now();
  #used = 0;

  constructor(ms: number, windowMs = 1000) {
    this.ms = ms;
    this.windowMs = windowMs;
  }

  #roll(): void {
    const now = performance.now();
    if (now - this.#windowStart < this.windowMs) return;
    this.#windowStart = now;
    this.#used = 0;
  }

  /** The window's budget is spent. */
  get exhausted(): boolean {
    this.#roll();
    return this.#used >= this.ms;
  }

  spend(ms: number): void {
    this.#roll();
    this.#used += ms;
  }

  /** Milliseconds until the next window starts. */
  get untilNextWindowMs(): number {
    return Math.max(0, this.#windowStart + this.windowMs - performance.now());
  }
}
