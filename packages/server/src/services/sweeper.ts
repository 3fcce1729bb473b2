import type { Lifecycle } from "../lifecycle/lifecycle.ts";

const sweepMs = 60 * 60 * 1000;

/** Once an hour: expired sessions are purged and device logs past their age limit are pruned. */
export class Sweeper implements Lifecycle {
  readonly name = "sweeper";
  readonly #tasks: Record<string, () => Promise<unknown>>;
  readonly #onError: (error: unknown, task: string) => void;
  #timer: NodeJS.Timeout | undefined;

  constructor(
    tasks: Record<string, () => Promise<unknown>>,
    onError: (error: unknown, task: string) => void,
  ) {
    this.#tasks = tasks;
    this.#onError = onError;
  }

  start(): void {
    this.#timer ??= setInterval(() => this.sweep(), sweepMs);
    this.#timer.unref();
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  sweep(): void {
    for (const [name, task] of Object.entries(this.#tasks)) {
      task().catch((error: unknown) => this.#onError(error, name));
    }
  }
}
