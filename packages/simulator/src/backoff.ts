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

/**
 * Delay n (0-based) has the ceiling min(cap, base · 2ⁿ); full jitter picks uniformly below it.
 * A quick window (after a 1012 restart close, or a long-lived connection lost without a close frame)
 * draws every delay uniformly in [min, max) instead, until it ends. Its retries count (n grows), so
 * when it ends the backoff goes on from the n reached: a fleet whose server is still not back
 * spreads over the grown ceiling instead of starting again at `base` all at once.
 */
export class Backoff {
  readonly #options: ReconnectOptions;
  #failures = 0;
  #quick: { untilMs: number; minMs: number; maxMs: number; capOnly: boolean } | null = null;

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

  /** Retries until `now + windowMs` are drawn uniformly in [minMs, maxMs) (the 1012 hint). */
  quick(now: number, windowMs: number, minMs: number, maxMs: number): void {
    this.#quick = { untilMs: now + windowMs, minMs, maxMs, capOnly: false };
  }

  /** Until `now + windowMs` the ceiling is at most `maxMs` (a lost long-lived connection). */
  capFor(now: number, windowMs: number, maxMs: number): void {
    this.#quick = { untilMs: now + windowMs, minMs: 0, maxMs, capOnly: true };
  }

  /** The connection is back: a later close starts from the normal backoff (or a new window). */
  endQuick(): void {
    this.#quick = null;
  }

  next(now = 0): number {
    const quick = this.#quick && now < this.#quick.untilMs ? this.#quick : null;
    if (!quick) this.#quick = null;
    if (quick && !quick.capOnly) {
      this.#failures++;
      const spread = quick.maxMs - quick.minMs;
      return (
        quick.minMs + (this.#options.jitter === "none" ? spread : Math.floor(this.#options.random() * spread))
      );
    }
    const ceiling = Math.min(this.ceiling(), quick ? quick.maxMs : Number.POSITIVE_INFINITY);
    this.#failures++;
    if (this.#options.jitter === "none") return ceiling;
    return Math.floor(this.#options.random() * ceiling);
  }

  reset(): void {
    this.#failures = 0;
  }
}
