import type { Clock } from "../lib/clock.ts";

const maxKeys = 100_000;

/**
 * Counts attempts per key (a client address, an account) in a sliding window. Memory is bounded:
 * each key keeps at most `maxAttempts` timestamps, and past `maxKeys` keys the oldest are dropped.
 */
export class AttemptLimiter {
  readonly #attempts = new Map<string, number[]>();
  readonly #max: number;
  readonly #windowMs: number;
  readonly #clock: Clock;

  constructor(options: { maxAttempts: number; windowSeconds: number }, clock: Clock) {
    this.#max = options.maxAttempts;
    this.#windowMs = options.windowSeconds * 1000;
    this.#clock = clock;
  }

  #recent(key: string, now: number): number[] {
    const list = this.#attempts.get(key);
    if (!list) return [];
    const fresh = list.filter((t) => t > now - this.#windowMs);
    if (fresh.length === 0) this.#attempts.delete(key);
    else if (fresh.length !== list.length) this.#attempts.set(key, fresh);
    return fresh;
  }

  /** Seconds to wait before any of these keys may try again, or 0 when all may try now. */
  retryAfterSeconds(keys: string[]): number {
    const now = this.#clock.now();
    let waitMs = 0;
    for (const key of keys) {
      const recent = this.#recent(key, now);
      if (recent.length >= this.#max) {
        const oldest = recent[recent.length - this.#max]!;
        waitMs = Math.max(waitMs, oldest + this.#windowMs - now);
      }
    }
    return waitMs > 0 ? Math.ceil(waitMs / 1000) : 0;
  }

  record(keys: string[]): void {
    const now = this.#clock.now();
    for (const key of keys) {
      const recent = this.#recent(key, now);
      recent.push(now);
      if (recent.length > this.#max) recent.splice(0, recent.length - this.#max);
      this.#attempts.delete(key); // re-insert: Map order is then oldest-touched first
      this.#attempts.set(key, recent);
    }
    while (this.#attempts.size > maxKeys) {
      const oldest = this.#attempts.keys().next().value;
      if (oldest === undefined) break;
      this.#attempts.delete(oldest);
    }
  }

  clear(key: string): void {
    this.#attempts.delete(key);
  }
}
