import type { Clock } from "../lib/clock.ts";

/** Failed deploys in a row that are let through before the pause starts. */
export const deployFailuresAllowed = 3;
const firstPauseMs = 10_000;
const longestPauseMs = 5 * 60_000;

/**
 * Per project: after `deployFailuresAllowed` failed deploys in a row, the next one waits 10 s, and
 * the pause doubles with each further failure, up to 5 minutes. A deploy that goes live resets it.
 * Deploys still loading count as failures until they end, so parallel deploys cannot pass the
 * check together. Kept in memory: a server restart forgets it.
 */
export class DeployThrottle {
  readonly #failures = new Map<string, { count: number; at: number }>();
  readonly #inProgress = new Map<string, number>();
  readonly #clock: Clock;

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  /** Seconds until the project may deploy again, or 0. */
  retryAfterSeconds(projectId: string): number {
    const f = this.#failures.get(projectId);
    const count = f?.count ?? 0;
    if (count + this.inProgress(projectId) < deployFailuresAllowed) return 0;
    if (!f || count < deployFailuresAllowed) return firstPauseMs / 1000; // limit reached by deploys still loading
    const pause = Math.min(longestPauseMs, firstPauseMs * 2 ** (f.count - deployFailuresAllowed));
    const wait = f.at + pause - this.#clock.now();
    return wait > 0 ? Math.ceil(wait / 1000) : 0;
  }

  failures(projectId: string): number {
    return this.#failures.get(projectId)?.count ?? 0;
  }

  inProgress(projectId: string): number {
    return this.#inProgress.get(projectId) ?? 0;
  }

  /** A deploy passed the check and is loading; `ended` must follow, whatever the outcome. */
  started(projectId: string): void {
    this.#inProgress.set(projectId, this.inProgress(projectId) + 1);
  }

  ended(projectId: string): void {
    const left = this.inProgress(projectId) - 1;
    if (left > 0) this.#inProgress.set(projectId, left);
    else this.#inProgress.delete(projectId);
  }

  /** The project is gone: drop what is kept for it. */
  forget(projectId: string): void {
    this.#failures.delete(projectId);
    this.#inProgress.delete(projectId);
  }

  failed(projectId: string): void {
    const count = (this.#failures.get(projectId)?.count ?? 0) + 1;
    this.#failures.set(projectId, { count, at: this.#clock.now() });
  }

  succeeded(projectId: string): void {
    this.#failures.delete(projectId);
  }
}
