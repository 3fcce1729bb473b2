import { createHash } from "node:crypto";
import type { Kysely } from "kysely";
import type { DB } from "../db/schema.ts";
import type { Clock } from "../lib/clock.ts";
import { type LoginAttemptsRepository, loginAttemptsRepository } from "../repositories/login-attempts.ts";

const maxKeys = 100_000;

export interface LimiterOptions {
  maxAttempts: number;
  windowSeconds: number;
}

/**
 * Counts attempts per key (a client address, an account) in a sliding window: after `maxAttempts`
 * within `windowSeconds`, a key waits until its oldest counted attempt leaves the window.
 */
export interface RateLimiter {
  /** Seconds to wait before any of these keys may try again, or 0 when all may try now. */
  retryAfterSeconds(keys: string[]): number | Promise<number>;
  record(keys: string[]): void | Promise<void>;
  clear(key: string): void | Promise<void>;
}

/**
 * The limiter of a server: in memory for one process; in the database (one limit across
 * instances) for an instance of a cluster, `db` given.
 */
export function rateLimiter(options: LimiterOptions, clock: Clock, db: Kysely<DB> | null): RateLimiter {
  return db
    ? new SharedAttemptLimiter(options, clock, loginAttemptsRepository(db))
    : new AttemptLimiter(options, clock);
}

/** The wait, in whole seconds, for keys whose attempts in the window are `recent` (oldest first). */
function waitSeconds(recent: Iterable<number[]>, max: number, windowMs: number, now: number): number {
  let waitMs = 0;
  for (const list of recent) {
    if (list.length >= max) {
      const oldest = list[list.length - max]!;
      waitMs = Math.max(waitMs, oldest + windowMs - now);
    }
  }
  return waitMs > 0 ? Math.ceil(waitMs / 1000) : 0;
}

/**
 * In memory, for one process. Memory is bounded: each key keeps at most `maxAttempts`
 * timestamps, and past `maxKeys` keys the oldest are dropped.
 */
export class AttemptLimiter implements RateLimiter {
  readonly #attempts = new Map<string, number[]>();
  readonly #max: number;
  readonly #windowMs: number;
  readonly #clock: Clock;

  constructor(options: LimiterOptions, clock: Clock) {
    this.#max = options.maxAttempts;
    this.#windowMs = options.windowSeconds * 1000;
    this.#clock = clock;
  }

  #recent(key: string, now: number): number[] {
    const list = this.#attempts.get(key);
    if (!list) return [];
    const fresh = list.filter((t) => t > now - this.#windowMs);
    if (fresh.length === 0) this.#attempts.delete(key);
    else if (fresh.length !== list.length) this.#attempts.set(key, fresh);
    return fresh;
  }

  /** Seconds to wait before any of these keys may try again, or 0 when all may try now. */
  retryAfterSeconds(keys: string[]): number {
    const now = this.#clock.now();
    return waitSeconds(
      keys.map((key) => this.#recent(key, now)),
      this.#max,
      this.#windowMs,
      now,
    );
  }

  record(keys: string[]): void {
    const now = this.#clock.now();
    for (const key of keys) {
      const recent = this.#recent(key, now);
      recent.push(now);
      if (recent.length > this.#max) recent.splice(0, recent.length - this.#max);
      this.#attempts.delete(key); // re-insert: Map order is then oldest-touched first
      this.#attempts.set(key, recent);
    }
    while (this.#attempts.size > maxKeys) {
      const oldest = this.#attempts.keys().next().value;
      if (oldest === undefined) break;
      this.#attempts.delete(oldest);
    }
  }

  clear(key: string): void {
    this.#attempts.delete(key);
  }
}

/**
 * In the database (table `loginAttempts`), for the instances of a cluster: every instance counts
 * the same attempts, so the limit holds however a load balancer spreads the requests. The same
 * sliding window and Retry-After as in memory. Rows are bounded: each key keeps at most
 * `maxAttempts` rows, none older than the window, and older rows of keys nobody tries again are
 * pruned once per window. Keys are stored hashed: no client address or email lands in the database.
 */
class SharedAttemptLimiter implements RateLimiter {
  readonly #repo: LoginAttemptsRepository;
  readonly #max: number;
  readonly #windowMs: number;
  readonly #clock: Clock;
  #prunedAt = Number.NEGATIVE_INFINITY;

  constructor(options: LimiterOptions, clock: Clock, repo: LoginAttemptsRepository) {
    this.#repo = repo;
    this.#max = options.maxAttempts;
    this.#windowMs = options.windowSeconds * 1000;
    this.#clock = clock;
  }

  async retryAfterSeconds(keys: string[]): Promise<number> {
    const now = this.#clock.now();
    const byKey = new Map<string, number[]>();
    for (const { key, at } of await this.#repo.since(keys.map(hashed), now - this.#windowMs)) {
      const list = byKey.get(key) ?? [];
      list.push(at);
      byKey.set(key, list);
    }
    return waitSeconds(byKey.values(), this.#max, this.#windowMs, now);
  }

  async record(keys: string[]): Promise<void> {
    const now = this.#clock.now();
    await this.#repo.record(keys.map(hashed), now, now - this.#windowMs, this.#max);
    if (now - this.#prunedAt >= this.#windowMs) {
      this.#prunedAt = now;
      await this.#repo.prune(now - this.#windowMs);
    }
  }

  async clear(key: string): Promise<void> {
    await this.#repo.clear(hashed(key));
  }
}

const hashed = (key: string) => createHash("sha256").update(key).digest("base64url");
