/** Reconnect timing: exponential backoff with full jitter. */
export interface ReconnectOptions {
  /** First retry ceiling in ms (default 250). */
  baseMs: number;
  /** Largest delay in ms (default 30 000). */
  capMs: number;
  /** A connection that stayed up this long resets the backoff (default 10 000). */
  resetAfterMs: number;
  /** "full": a random delay in [0, ceiling) (default); "none": exactly the ceiling. */
  jitter: "full" | "none";
  /** Random source in [0, 1) for the jitter (default Math.random). */
  random: () => number;
}

export const defaultReconnect: ReconnectOptions = {
  baseMs: 250,
  capMs: 30_000,
  resetAfterMs: 10_000,
  jitter: "full",
  random: Math.random,
};

/** Delay n (0-based) has the ceiling min(cap, base · 2ⁿ); full jitter picks uniformly below it. */
export class Backoff {
  readonly #options: ReconnectOptions;
  #failures = 0;

  constructor(options: ReconnectOptions) {
    this.#options = options;
  }

  /** How many delays were handed out since the last reset. */
  get failures(): number {
    return this.#failures;
  }

  ceiling(n = this.#failures): number {
    const { baseMs, capMs } = this.#options;
    return Math.min(capMs, baseMs * 2 ** Math.min(n, 30));
  }

  next(): number {
    const ceiling = this.ceiling();
    this.#failures++;
    if (this.#options.jitter === "none") return ceiling;
    return Math.floor(this.#options.random() * ceiling);
  }

  reset(): void {
    this.#failures = 0;
  }
}
