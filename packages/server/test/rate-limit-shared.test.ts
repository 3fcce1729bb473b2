import assert from "node:assert/strict";
import { test } from "node:test";
import { sql } from "kysely";
import { AttemptLimiter, type RateLimiter, rateLimiter } from "../src/services/rate-limiter.ts";
import { TestClock } from "./helpers/clock.ts";
import { repositorySuites } from "./helpers/repository-suite.ts";

const options = { maxAttempts: 3, windowSeconds: 60 };

/** The same sliding window, whichever limiter: three attempts, then a wait until the oldest leaves. */
async function slidingWindow(limiter: RateLimiter, clock: TestClock) {
  const keys = ["login-ip:10.0.0.1", "login-account:a@example.com"];
  assert.equal(await limiter.retryAfterSeconds(keys), 0);
  await limiter.record(keys);
  clock.advance(10_000);
  await limiter.record(keys);
  await limiter.record(keys);
  assert.equal(await limiter.retryAfterSeconds(keys), 50, "the oldest attempt leaves the window in 50 s");
  clock.advance(30_000);
  assert.equal(await limiter.retryAfterSeconds(keys), 20);
  assert.equal(await limiter.retryAfterSeconds(["login-ip:10.0.0.2"]), 0, "another key is not limited");
  clock.advance(20_001);
  assert.equal(await limiter.retryAfterSeconds(keys), 0, "the oldest attempt left the window");
  await limiter.record(keys);
  assert.equal(await limiter.retryAfterSeconds(keys), 10, "the second attempt leaves in 10 s");
  await limiter.clear("login-account:a@example.com");
  assert.equal(await limiter.retryAfterSeconds(["login-account:a@example.com"]), 0);
  assert.equal(
    await limiter.retryAfterSeconds(["login-ip:10.0.0.1"]),
    10,
    "clearing one key keeps the other",
  );
}

test("in memory: the sliding window and its Retry-After", async () => {
  const clock = new TestClock();
  await slidingWindow(new AttemptLimiter(options, clock), clock);
});

repositorySuites("the rate limiter in the database", ({ setup }) => {
  test("the same sliding window and Retry-After as in memory", async (t) => {
    const c = await setup(t);
    if (!c) return;
    const clock = new TestClock();
    await slidingWindow(rateLimiter(options, clock, c.database.db), clock);
  });

  test("two limiters on one database (two instances) share one limit", async (t) => {
    const c = await setup(t);
    if (!c) return;
    const clock = new TestClock();
    const a = rateLimiter(options, clock, c.database.db);
    const b = rateLimiter(options, clock, c.database.db);
    const keys = ["login-ip:10.0.0.1"];
    await a.record(keys);
    await b.record(keys);
    assert.equal(await a.retryAfterSeconds(keys), 0);
    await a.record(keys);
    assert.equal(await b.retryAfterSeconds(keys), 60, "B counts the attempts made through A");
    assert.equal(await a.retryAfterSeconds(keys), 60);
    await b.clear("login-ip:10.0.0.1");
    assert.equal(await a.retryAfterSeconds(keys), 0, "a success through B clears the key for A");
  });

  test("rows stay bounded: at most the limit per key, none older than the window", async (t) => {
    const c = await setup(t);
    if (!c) return;
    const clock = new TestClock();
    const limiter = rateLimiter(options, clock, c.database.db);
    const count = async () =>
      Number(
        (
          await c.database.db
            .selectFrom("loginAttempts")
            .select(sql<number>`count(*)`.as("n"))
            .executeTakeFirstOrThrow()
        ).n,
      );
    for (let i = 0; i < 10; i++) {
      await limiter.record(["login-ip:10.0.0.1"]);
      clock.advance(1_000);
    }
    assert.equal(await count(), 3, "an attacker's key keeps only the newest attempts");
    assert.equal(await limiter.retryAfterSeconds(["login-ip:10.0.0.1"]), 57);
    for (let i = 0; i < 5; i++) await limiter.record([`login-account:user${i}@example.com`]);
    assert.equal(await count(), 8);
    clock.advance(61_000);
    await limiter.record(["login-ip:10.0.0.9"]);
    assert.equal(await count(), 1, "attempts past the window are pruned, whatever their key");
    const stored = await c.database.db.selectFrom("loginAttempts").select("key").execute();
    assert.ok(
      stored.every((r) => !r.key.includes("10.0.0") && !r.key.includes("@")),
      "keys are stored hashed",
    );
  });
});
