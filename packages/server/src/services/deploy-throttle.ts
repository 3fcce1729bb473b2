import type { Clock } from "../lib/clock.ts";

/** Failed deploys in a row that are let through before the pause starts. */
export const deployFailuresAllowed = 3;
const firstPauseMs = 10_000;
const longestPauseMs = 5 * 60_000;

/**
 * Per project: after `deployFailuresAllowed` failed deploys in a row, the next one waits 10 s, and
 * the pause doubles with each further failure, up to 5 minutes. A deploy that goes live resets it.
 * Kept in memory: a server restart forgets it.
 */
export class DeployThrottle {
  readonly #failures = new Map<string, { count: number; at: number }>();
  readonly #clock: Clock;

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  /** Seconds until the project may deploy again, or 0. */
  retryAfterSeconds(projectId: string): number {
    const f = this.#failures.get(projectId);
    if (!f || f.count < deployFailuresAllowed) return 0;
    const pause = Math.min(longestPauseMs, firstPauseMs * 2 ** (f.count - deployFailuresAllowed));
    const wait = f.at + pause - this.#clock.now();
    return wait > 0 ? Math.ceil(wait / 1000) : 0;
  }

  failures(projectId: string): number {
    return this.#failures.get(projectId)?.count ?? 0;
  }

  failed(projectId: string): void {
    const count = (this.#failures.get(projectId)?.count ?? 0) + 1;
    this.#failures.set(projectId, { count, at: this.#clock.now() });
  }

  succeeded(projectId: string): void {
    this.#failures.delete(projectId);
  }
}
