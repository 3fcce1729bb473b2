import type { SandboxLimits } from "./limits.ts";
import { realScheduler, type Scheduler } from "./scheduler.ts";

/** A device instance's guest timers, run as host timers: a bounded number, a minimum delay. */
export class DeviceTimers {
  readonly #timers = new Map<number, unknown>();
  readonly #limits: Pick<SandboxLimits, "maxTimersPerDevice" | "minTimerMs">;
  readonly #fire: (timerId: number) => void;
  readonly #scheduler: Scheduler;

  constructor(
    limits: Pick<SandboxLimits, "maxTimersPerDevice" | "minTimerMs">,
    fire: (timerId: number) => void,
    scheduler: Scheduler = realScheduler,
  ) {
    this.#limits = limits;
    this.#fire = fire;
    this.#scheduler = scheduler;
  }

  /** Throws RangeError when the device already has the most timers it may have. */
  set(timerId: number, delayMs: number, repeat: boolean): void {
    this.clear(timerId);
    if (this.#timers.size >= this.#limits.maxTimersPerDevice) {
      throw new RangeError(`too many timers: at most ${this.#limits.maxTimersPerDevice} per device`);
    }
    const ms = Math.max(this.#limits.minTimerMs, Math.min(delayMs || 0, 2 ** 31 - 1));
    const timer = repeat
      ? this.#scheduler.setInterval(() => this.#fire(timerId), ms)
      : this.#scheduler.setTimeout(() => {
          this.#timers.delete(timerId);
          this.#fire(timerId);
        }, ms);
    this.#timers.set(timerId, timer);
  }

  clear(timerId: number): void {
    const timer = this.#timers.get(timerId);
    if (timer === undefined) return;
    this.#scheduler.clear(timer);
    this.#timers.delete(timerId);
  }

  clearAll(): void {
    for (const timer of this.#timers.values()) this.#scheduler.clear(timer);
    this.#timers.clear();
  }
}
