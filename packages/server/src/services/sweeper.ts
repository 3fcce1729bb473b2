import type { Lifecycle } from "../lifecycle/lifecycle.ts";

const hourMs = 60 * 60 * 1000;
const minuteMs = 60 * 1000;
/** The first hourly run, so a server restarted more often than hourly still sweeps. */
const firstSweepMs = 5 * minuteMs;

type Tasks = Record<string, () => Promise<unknown>>;

/**
 * Housekeeping: the hourly tasks (expired sessions, retention) 5 minutes after start and then once
 * an hour, the frequent ones (disk space, the database's size cap) at start and every minute. A
 * task still running is not started again.
 */
export class Sweeper implements Lifecycle {
  readonly name = "sweeper";
  readonly #hourly: Tasks;
  readonly #frequent: Tasks;
  readonly #onError: (error: unknown, task: string) => void;
  readonly #running = new Set<string>();
  #timers: NodeJS.Timeout[] = [];

  constructor(hourly: Tasks, onError: (error: unknown, task: string) => void, frequent: Tasks = {}) {
    this.#hourly = hourly;
    this.#frequent = frequent;
    this.#onError = onError;
  }

  start(): void {
    if (this.#timers.length > 0) return;
    this.#timers = [
      setInterval(() => void this.sweep(), hourMs),
      setInterval(() => void this.#run(this.#frequent), minuteMs),
      setTimeout(() => void this.sweep(), firstSweepMs),
    ];
    for (const timer of this.#timers) timer.unref();
    void this.#run(this.#frequent); // a disk that is already low is said at start
  }

  stop(): void {
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers = [];
  }

  /** Runs the hourly tasks now; resolves when they are done (failures go to onError). */
  sweep(): Promise<void> {
    return this.#run(this.#hourly);
  }

  async #run(tasks: Tasks): Promise<void> {
    await Promise.all(
      Object.entries(tasks)
        .filter(([name]) => !this.#running.has(name))
        .map(async ([name, task]) => {
          this.#running.add(name);
          try {
            await task();
          } catch (error) {
            this.#onError(error, name);
          } finally {
            this.#running.delete(name);
          }
        }),
    );
  }
}
