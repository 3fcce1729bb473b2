/**
 * A project's CPU budget: `ms` milliseconds of guest time per `windowMs` of wall-clock time, as
 * a token bucket that refills continuously and holds at most half a window's worth. An entry
 * may start while any budget is left; what it used beyond that is owed and waited out. So a
 * sandbox never uses more than its share of the time that passes, even when a busy machine gives
 * its thread less than a core.
 */
export class CpuBudget {
  readonly ms: number;
  readonly windowMs: number;
  readonly #capacity: number;
  #tokens: number;
  #at = performance.now();

  constructor(ms: number, windowMs = 1000) {
    this.ms = ms;
    this.windowMs = windowMs;
    this.#capacity = ms / 2;
    this.#tokens = this.#capacity;
  }

  #refill(): void {
    const now = performance.now();
    this.#tokens = Math.min(this.#capacity, this.#tokens + ((now - this.#at) * this.ms) / this.windowMs);
    this.#at = now;
  }

  /** Nothing is left: entries wait. */
  get exhausted(): boolean {
    this.#refill();
    return this.#tokens <= 0;
  }

  spend(ms: number): void {
    this.#refill();
    this.#tokens -= ms;
  }

  /** Milliseconds until an entry may run again. */
  get untilNextWindowMs(): number {
    this.#refill();
    return this.#tokens > 0 ? 0 : (-this.#tokens * this.windowMs) / this.ms;
  }
}
