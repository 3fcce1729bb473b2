// boundedAll, the runner behind commands and messages to every device with a tag: never more than
// `concurrency` tasks at once, one outcome per item in the items' order, and the overall time limit.
import assert from "node:assert/strict";
import { test } from "node:test";
import { tagActionLimits } from "@sdk/protocol";
import { boundedAll } from "../src/lib/bounded-all.ts";

/** Tasks that finish only when the test says so; records which items started and how many ran at once. */
function controlledTasks() {
  const pending = new Map<number, { resolve: (v: string) => void; reject: (e: unknown) => void }>();
  const started: number[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const task = (item: number) =>
    new Promise<string>((resolve, reject) => {
      started.push(item);
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      const done = () => {
        inFlight--;
        pending.delete(item);
      };
      pending.set(item, {
        resolve: (v) => {
          done();
          resolve(v);
        },
        reject: (e) => {
          done();
          reject(e);
        },
      });
    });
  return {
    task,
    pending,
    started,
    maxInFlight: () => maxInFlight,
  };
}

/** Lets promise callbacks run until `ready()` holds (no clock involved). */
async function until(ready: () => boolean, what: string) {
  for (let i = 0; i < 10_000; i++) {
    if (ready()) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error(`never happened: ${what}`);
}

const outcome = {
  onError: (item: number, error: unknown) => `error ${item}: ${(error as Error).message}`,
  onTimeout: (item: number, started: boolean) => `timeout ${item} ${started ? "running" : "not started"}`,
};

test("boundedAll: at most `concurrency` at once, a new one as each finishes, results in the items' order", async () => {
  const items = Array.from({ length: 20 }, (_, i) => i);
  const c = controlledTasks();
  const concurrency = tagActionLimits.concurrency; // what commands and messages to a tag use
  assert.equal(concurrency, 8);
  const all = boundedAll(items, { concurrency, timeoutMs: 3_600_000, task: c.task, ...outcome });
  await until(() => c.started.length === 8, "the first 8 start");
  assert.deepEqual(c.started, [0, 1, 2, 3, 4, 5, 6, 7], "exactly 8 start at first, in order");

  // finish them newest first, one at a time: each finish starts exactly one more
  while (c.pending.size > 0) {
    const newest = Math.max(...c.pending.keys());
    const before = c.started.length;
    c.pending.get(newest)!.resolve(`done ${newest}`);
    await until(
      () => c.started.length === Math.min(before + 1, items.length) && !c.pending.has(newest),
      `the task after ${newest}`,
    );
    assert.ok(c.pending.size <= 8);
  }
  const results = await all;
  assert.equal(c.maxInFlight(), 8);
  assert.deepEqual(
    results,
    items.map((i) => `done ${i}`),
    "each result in its item's place, whatever the finishing order",
  );
  assert.deepEqual(
    [...c.started].sort((a, b) => a - b),
    items,
    "every item ran once",
  );
});

test("boundedAll: a task that throws or rejects gives onError in its place and the rest go on", async () => {
  const results = await boundedAll([1, 2, 3, 4], {
    concurrency: 2,
    timeoutMs: 3_600_000,
    task: async (item) => {
      if (item === 2) throw new Error("offline");
      return `ok ${item}`;
    },
    ...outcome,
  });
  assert.deepEqual(results, ["ok 1", "error 2: offline", "ok 3", "ok 4"]);

  const sync = await boundedAll([1, 2], {
    concurrency: 1,
    timeoutMs: 3_600_000,
    task: (item) => {
      if (item === 1) throw new Error("thrown before a promise");
      return Promise.resolve(`ok ${item}`);
    },
    ...outcome,
  });
  assert.deepEqual(sync, ["error 1: thrown before a promise", "ok 2"]);
  assert.deepEqual(
    await boundedAll([], { concurrency: 8, timeoutMs: 1, task: async () => "never", ...outcome }),
    [],
  );
});

test("boundedAll: when the overall time is up, running items and unstarted ones time out; late answers are ignored", async (t) => {
  t.mock.timers.enable({ apis: ["setTimeout"] });
  const c = controlledTasks();
  const items = [0, 1, 2, 3, 4];
  let settled: string[] | undefined;
  const all = boundedAll(items, { concurrency: 2, timeoutMs: 30_000, task: c.task, ...outcome }).then((r) => {
    settled = r;
    return r;
  });
  await until(() => c.started.length === 2, "two start");
  c.pending.get(0)!.resolve("done 0");
  await until(() => c.started.length === 3, "item 2 takes item 0's place");

  t.mock.timers.tick(29_999);
  await until(() => true, "a turn");
  assert.equal(settled, undefined, "not before the limit");
  t.mock.timers.tick(1);
  const results = await all;
  assert.deepEqual(results, [
    "done 0",
    "timeout 1 running",
    "timeout 2 running",
    "timeout 3 not started",
    "timeout 4 not started",
  ]);

  // answers after the limit change nothing and start nothing more
  c.pending.get(1)!.resolve("late 1");
  c.pending.get(2)!.reject(new Error("late failure"));
  await until(() => c.pending.size === 0, "the late answers");
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(c.started, [0, 1, 2], "items 3 and 4 never started");
  assert.deepEqual(results[1], "timeout 1 running");
});

test("boundedAll: when everything settles first, the timer is cleared and nothing times out later", async (t) => {
  t.mock.timers.enable({ apis: ["setTimeout"] });
  let timeouts = 0;
  const results = await boundedAll([1, 2, 3], {
    concurrency: 8,
    timeoutMs: 30_000,
    task: async (item) => item * 10,
    onError: () => -1,
    onTimeout: () => {
      timeouts++;
      return -2;
    },
  });
  assert.deepEqual(results, [10, 20, 30]);
  t.mock.timers.tick(60_000);
  assert.equal(timeouts, 0);
});
