import type { Scheduler } from "@sdk/sandbox";

interface Timer {
  id: number;
  at: number;
  /** Repeats every `every` ms; 0 for a timeout. */
  every: number;
  fn: () => void;
}

/**
 * A clock that only moves when told: timers fire in the order they are due (ties in the order they
 * were set), each at its own time, without waiting. What `sdk test` runs the script's timers on.
 */
export class VirtualClock implements Scheduler {
  #now = 0;
  #nextId = 1;
  readonly #timers = new Map<number, Timer>();

  /** Milliseconds since the replay started. */
  get now(): number {
    return this.#now;
  }

  setTimeout(fn: () => void, ms: number): unknown {
    return this.#add(fn, ms, 0);
  }

  setInterval(fn: () => void, ms: number): unknown {
    return this.#add(fn, ms, Math.max(1, ms));
  }

  clear(handle: unknown): void {
    if (typeof handle === "number") this.#timers.delete(handle);
  }

  /** The timer due next, if it is due by `until`. */
  #due(until: number): Timer | undefined {
    let next: Timer | undefined;
    for (const timer of this.#timers.values()) {
      if (timer.at <= until && (!next || timer.at < next.at || (timer.at === next.at && timer.id < next.id)))
        next = timer;
    }
    return next;
  }

  /**
   * Fires every timer due by `until`, in order, moving the clock to each one's time; `settle` runs
   * after each (what the timer started finishes before the next one fires). Ends at `until`.
   */
  async advanceTo(until: number, settle: () => Promise<void>): Promise<void> {
    for (let timer = this.#due(until); timer; timer = this.#due(until)) {
      this.#now = Math.max(this.#now, timer.at);
      if (timer.every > 0) timer.at += timer.every;
      else this.#timers.delete(timer.id);
      timer.fn();
      await settle();
    }
    this.#now = Math.max(this.#now, until);
  }

  #add(fn: () => void, ms: number, every: number): number {
    const id = this.#nextId++;
    this.#timers.set(id, { id, at: this.#now + Math.max(0, ms), every, fn });
    return id;
  }
}
