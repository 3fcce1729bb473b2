import type { Clock } from "../../src/lib/clock.ts";

/** A clock tests move by hand, so windows and expiries are checked without sleeping. */
export class TestClock implements Clock {
  #now: number;

  constructor(start = Date.UTC(2026, 0, 1)) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  advance(ms: number): void {
    this.#now += ms;
  }
}
