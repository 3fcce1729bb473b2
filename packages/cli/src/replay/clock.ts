import type { Scheduler } from "@sdk/sandbox";

interface Timer {
  id: number;
  at: number;
  /** Repeats every `every` ms; 0 for a timeout. */
  every: number;
  fn: () => void;
}

/** How many timer fires one replay allows before it stops: a runaway interval ends the replay. */
const defaultFireBudget = 5_000_000;

/** The clock's timers fired more than its budget: the replay stops. */
export class FireBudgetError extends Error {
  constructor(budget: number, at: number) {
    super(
      `timers fired more than ${budget.toLocaleString("en-US")} times (by ${(at / 1000).toFixed(2)} s on the virtual clock): a very short interval or a very long recording; the replay stopped`,
    );
    this.name = "FireBudgetError";
  }
}

/** Due first: the earlier `at`, ties in the order the timers were set. */
const before = (a: Timer, b: Timer) => a.at < b.at || (a.at === b.at && a.id < b.id);

/** A binary min-heap of timers by (`at`, `id`). */
class TimerHeap {
  readonly #items: Timer[] = [];

  peek(): Timer | undefined {
    return this.#items[0];
  }

  push(timer: Timer): void {
    const items = this.#items;
    items.push(timer);
    for (let i = items.length - 1; i > 0; ) {
      const parent = (i - 1) >> 1;
      if (!before(items[i]!, items[parent]!)) break;
      [items[i], items[parent]] = [items[parent]!, items[i]!];
      i = parent;
    }
  }

  pop(): Timer | undefined {
    const items = this.#items;
    const top = items[0];
    const last = items.pop();
    if (items.length === 0 || !last) return top;
    items[0] = last;
    for (let i = 0; ; ) {
      const l = 2 * i + 1;
      const r = l + 1;
      let min = i;
      if (l < items.length && before(items[l]!, items[min]!)) min = l;
      if (r < items.length && before(items[r]!, items[min]!)) min = r;
      if (min === i) break;
      [items[i], items[min]] = [items[min]!, items[i]!];
      i = min;
    }
    return top;
  }
}

/**
 * A clock that only moves when told: timers fire in the order they are due (ties in the order they
 * were set), each at its own time, without waiting. What `sdk test` runs the script's timers on.
 * At most `fireBudget` fires in all: one more throws `FireBudgetError`.
 */
export class VirtualClock implements Scheduler {
  #now = 0;
  #nextId = 1;
  #fires = 0;
  readonly #fireBudget: number;
  /** The live timers by id; the heap may still hold cleared ones, skipped when they come up. */
  readonly #timers = new Map<number, Timer>();
  readonly #heap = new TimerHeap();

  constructor(options: { fireBudget?: number } = {}) {
    this.#fireBudget = options.fireBudget ?? defaultFireBudget;
  }

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

  /** The timer due next, if it is due by `until` (cleared ones are dropped on the way). */
  #due(until: number): Timer | undefined {
    for (let next = this.#heap.peek(); next; next = this.#heap.peek()) {
      if (this.#timers.get(next.id) !== next) {
        this.#heap.pop();
        continue;
      }
      return next.at <= until ? next : undefined;
    }
    return undefined;
  }

  /**
   * Fires every timer due by `until`, in order, moving the clock to each one's time; `settle` runs
   * after each (what the timer started finishes before the next one fires). Ends at `until`.
   */
  async advanceTo(until: number, settle: () => Promise<void>): Promise<void> {
    for (let timer = this.#due(until); timer; timer = this.#due(until)) {
      if (++this.#fires > this.#fireBudget) throw new FireBudgetError(this.#fireBudget, timer.at);
      this.#heap.pop();
      this.#now = Math.max(this.#now, timer.at);
      if (timer.every > 0) {
        // A new heap item: the id stays, so the handle still clears it.
        const again = { ...timer, at: timer.at + timer.every };
        this.#timers.set(timer.id, again);
        this.#heap.push(again);
      } else this.#timers.delete(timer.id);
      timer.fn();
      await settle();
    }
    this.#now = Math.max(this.#now, until);
  }

  #add(fn: () => void, ms: number, every: number): number {
    const id = this.#nextId++;
    const timer = { id, at: this.#now + Math.max(0, ms), every, fn };
    this.#timers.set(id, timer);
    this.#heap.push(timer);
    return id;
  }
}
