import type { Lifecycle } from "../lifecycle/lifecycle.ts";

const hourMs = 60 * 60 * 1000;
const minuteMs = 60 * 1000;
/** The first hourly run, so a server restarted more often than hourly still sweeps. */
const firstSweepMs = 5 * minuteMs;
/** How long stop() waits for a running task to reach a point where it can stop. */
const stopWaitMs = 10_000;

/** A task is told through `signal` that the server stops: it ends at its next batch boundary. */
type Tasks = Record<string, (signal: AbortSignal) => Promise<unknown>>;

/**
 * Housekeeping: the hourly tasks (expired sessions, retention) 5 minutes after start and then once
 * an hour, the frequent ones (disk space, the database's size cap) at start and every minute. A
 * task still running is not started again. Stopping aborts the running tasks and waits (a bounded
 * time) for them to end, so the database is not closed under a sweep.
 */
export class Sweeper implements Lifecycle {
  readonly name = "sweeper";
  readonly #hourly: Tasks;
  readonly #frequent: Tasks;
  readonly #onError: (error: unknown, task: string) => void;
  readonly #running = new Set<string>();
  readonly #inFlight = new Set<Promise<void>>();
  #abort = new AbortController();
  #timers: NodeJS.Timeout[] = [];

  constructor(hourly: Tasks, onError: (error: unknown, task: string) => void, frequent: Tasks = {}) {
    this.#hourly = hourly;
    this.#frequent = frequent;
    this.#onError = onError;
  }

  start(): void {
    if (this.#timers.length > 0) return;
    this.#abort = new AbortController();
    this.#timers = [
      setInterval(() => void this.sweep(), hourMs),
      setInterval(() => void this.#run(this.#frequent), minuteMs),
      setTimeout(() => void this.sweep(), firstSweepMs),
    ];
    for (const timer of this.#timers) timer.unref();
    void this.#run(this.#frequent); // a disk that is already low is said at start
  }

  async stop(): Promise<void> {
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers = [];
    this.#abort.abort();
    if (this.#inFlight.size === 0) return;
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, stopWaitMs);
    });
    await Promise.race([Promise.allSettled([...this.#inFlight]), bound]);
    clearTimeout(timer);
  }

  /** Runs the hourly tasks now; resolves when they are done (failures go to onError). */
  sweep(): Promise<void> {
    return this.#run(this.#hourly);
  }

  #run(tasks: Tasks): Promise<void> {
    const run = this.#runAll(tasks);
    this.#inFlight.add(run);
    const done = () => this.#inFlight.delete(run);
    run.then(done, done);
    return run;
  }

  async #runAll(tasks: Tasks): Promise<void> {
    const signal = this.#abort.signal;
    await Promise.all(
      Object.entries(tasks)
        .filter(([name]) => !this.#running.has(name))
        .map(async ([name, task]) => {
          this.#running.add(name);
          try {
            await task(signal);
          } catch (error) {
            this.#onError(error, name);
          } finally {
            this.#running.delete(name);
          }
        }),
    );
  }
}
