/** Longer lines are not tracked (10,000 keys per group of at most this many characters bound the memory). */
const maxKeyLength = 2048;

/** A line counted in the current window. */
interface Seen {
  count: number;
  flush: () => void;
}

/**
 * Keeps repeated lines from flooding a device's log: of identical lines (same device, level and
 * text) in a window, the first `keep` are written; the rest are counted and said once when the
 * window ends, as "<line> (repeated N more times in the last 10 s)".
 */
export class LogCollapser {
  readonly #windowMs: number;
  readonly #keep: number;
  readonly #maxKeys: number;
  #seen = new Map<string, Seen>();
  /** Keys tracked per group (a project) in this window: one group's many lines do not stop another's from collapsing. */
  #perGroup = new Map<string, number>();
  #timer: NodeJS.Timeout | undefined;

  constructor(options: { windowMs: number; keep: number; maxKeys?: number }) {
    this.#windowMs = options.windowMs;
    this.#keep = options.keep;
    this.#maxKeys = options.maxKeys ?? 10_000;
  }

  /**
   * True when the line is to be written now. `summary` writes the count of the suppressed ones at
   * the end of the window (with the text it is given). At most `maxKeys` lines are tracked per `group`.
   */
  admit(key: string, summary: (suffix: string) => void, group = ""): boolean {
    if (key.length > maxKeyLength) return true;
    const seen = this.#seen.get(key);
    if (!seen) {
      const tracked = this.#perGroup.get(group) ?? 0;
      if (tracked >= this.#maxKeys) return true;
      this.#perGroup.set(group, tracked + 1);
      this.#seen.set(key, { count: 1, flush: () => {} });
      this.#timer ??= setTimeout(() => this.flush(), this.#windowMs).unref();
      return true;
    }
    seen.count++;
    if (seen.count <= this.#keep) return true;
    const suppressed = seen.count - this.#keep;
    const seconds = Math.round(this.#windowMs / 1000);
    seen.flush = () =>
      summary(` (repeated ${suppressed} more time${suppressed === 1 ? "" : "s"} in the last ${seconds} s)`);
    return false;
  }

  /** Ends the window: says the counts, forgets the lines. */
  flush(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const seen = this.#seen;
    this.#seen = new Map();
    this.#perGroup.clear();
    for (const s of seen.values()) s.flush();
  }

  /** Forgets everything without saying it (the server stops). */
  clear(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#seen.clear();
    this.#perGroup.clear();
  }
}
