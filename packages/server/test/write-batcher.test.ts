// The write batcher on a real SQLite file: group commit, order, one bad write failing alone,
// and the barrier reads use.
import assert from "node:assert/strict";
import { type TestContext, test } from "node:test";
import { sql, type Transaction } from "kysely";
import { type Database, openDatabase } from "../src/db/database.ts";
import type { DB } from "../src/db/schema.ts";
import { WriteBatcher } from "../src/db/write-batcher.ts";
import { tempDir } from "./helpers/server.ts";

async function open(t: TestContext): Promise<Database> {
  const database = await openDatabase({ dataDir: tempDir(t, "sdk-batcher-"), databaseUrl: null });
  t.after(() => database.close());
  return database;
}

/** The readiness table is the simplest one: (id primary key, checked_at). */
const insert =
  (id: string, checkedAt = 0) =>
  (tx: Transaction<DB>) =>
    tx
      .insertInto("readiness")
      .values({ id, checkedAt })
      .execute()
      .then(() => {});

async function ids(database: Database): Promise<string[]> {
  const rows = await database.db.selectFrom("readiness").select("id").orderBy("id").execute();
  return rows.map((r) => r.id);
}

/** A promise opened from outside, to hold a write inside its transaction. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((r) => {
    open = r;
  });
  return { open, opened };
}

test("writes queued in one turn share one transaction and each settles when committed", async (t) => {
  const database = await open(t);
  const seen: Transaction<DB>[] = [];
  const write = (id: string) => (tx: Transaction<DB>) => {
    seen.push(tx);
    return insert(id)(tx);
  };
  await Promise.all(["a", "b", "c"].map((id) => database.batcher.run(write(id))));
  assert.equal(seen.length, 3);
  assert.equal(new Set(seen).size, 1, "one transaction for the three writes");
  assert.deepEqual(await ids(database), ["a", "b", "c"]);
});

test("writes run in the order they were queued, across batches", async (t) => {
  const database = await open(t);
  await database.db.insertInto("readiness").values({ id: "counter", checkedAt: 0 }).execute();
  const batcher = new WriteBatcher(database.db, 2);
  const observed: number[] = [];
  const step = (value: number) => async (tx: Transaction<DB>) => {
    const row = await tx
      .selectFrom("readiness")
      .select("checkedAt")
      .where("id", "=", "counter")
      .executeTakeFirstOrThrow();
    observed.push(row.checkedAt);
    await tx.updateTable("readiness").set({ checkedAt: value }).where("id", "=", "counter").execute();
  };
  await Promise.all([1, 2, 3, 4, 5].map((v) => batcher.run(step(v))));
  assert.deepEqual(observed, [0, 1, 2, 3, 4], "each write sees the one queued before it");
  const row = await database.db
    .selectFrom("readiness")
    .select("checkedAt")
    .where("id", "=", "counter")
    .executeTakeFirstOrThrow();
  assert.equal(row.checkedAt, 5);
});

test("a failing write fails alone: the batch is retried one by one and the good writes commit", async (t) => {
  const database = await open(t);
  await database.db.insertInto("readiness").values({ id: "taken", checkedAt: 0 }).execute();
  const halfDone = async (tx: Transaction<DB>) => {
    await insert("half")(tx);
    throw new Error("gave up after its first insert");
  };
  const results = await Promise.allSettled([
    database.batcher.run(insert("good-1")),
    database.batcher.run(insert("taken")),
    database.batcher.run(halfDone),
    database.batcher.run(insert("good-2")),
  ]);
  assert.deepEqual(
    results.map((r) => r.status),
    ["fulfilled", "rejected", "rejected", "fulfilled"],
  );
  assert.match(String((results[1] as PromiseRejectedResult).reason), /UNIQUE/i);
  assert.match(String((results[2] as PromiseRejectedResult).reason), /gave up after its first insert/);
  assert.deepEqual(
    await ids(database),
    ["good-1", "good-2", "taken"],
    "the failed writes left nothing behind",
  );

  await database.batcher.run(insert("after"));
  assert.ok((await ids(database)).includes("after"), "the batcher keeps working after a failed batch");
});

test("the barrier resolves at once when nothing is queued", async (t) => {
  const database = await open(t);
  await database.batcher.barrier();
  await database.batcher.run(insert("a"));
  await database.batcher.barrier();
});

test("the barrier waits for the writes queued before it, so a read after it sees them", async (t) => {
  const database = await open(t);
  const held = gate();
  let entered = false;
  const write = database.batcher.run(async (tx) => {
    entered = true;
    await insert("before")(tx);
    await held.opened;
  });
  const barrier = database.batcher.barrier();
  let passed = false;
  void barrier.then(() => {
    passed = true;
  });
  while (!entered) await new Promise((r) => setImmediate(r));
  assert.equal(passed, false, "the barrier is not passed while an earlier write is uncommitted");
  held.open();
  await barrier;
  assert.deepEqual(await ids(database), ["before"]);
  await write;
});

test("the barrier does not wait for writes queued after it", async (t) => {
  const database = await open(t);
  const held = gate();
  let entered = false;
  const before = database.batcher.run(async (tx) => {
    entered = true;
    await insert("before")(tx);
    await held.opened;
  });
  while (!entered) await new Promise((r) => setImmediate(r));
  // The first batch is running: the barrier and a later write queue behind it.
  let passed = false;
  const barrier = database.batcher.barrier().then(() => {
    passed = true;
  });
  let passedWhenLaterRan: boolean | undefined;
  const after = database.batcher.run(async (tx) => {
    passedWhenLaterRan = passed;
    await insert("after")(tx);
  });
  held.open();
  await Promise.all([before, barrier, after]);
  assert.equal(passedWhenLaterRan, true, "the barrier passed once the write before it committed");
});

test("room() asks writers to wait while the queue is at its bound and lets them go once it has drained", async (t) => {
  const database = await open(t);
  const batcher = new WriteBatcher(database.db, { maxBatch: 2, maxQueued: 4 });
  const held = gate();
  let entered = false;
  const first = batcher.run(async (tx) => {
    entered = true;
    await insert("held")(tx);
    await held.opened;
  });
  while (!entered) await new Promise((r) => setImmediate(r));
  assert.equal(batcher.room(), null, "room while below the bound");
  const queued = ["a", "b", "c", "d"].map((id) => batcher.run(insert(id)));
  const room = batcher.room();
  assert.ok(room, "at the bound, writers are asked to wait");
  assert.equal(batcher.room(), room, "every writer waits for the same room");
  let roomy = false;
  void room.then(() => {
    roomy = true;
  });
  await new Promise((r) => setImmediate(r));
  assert.equal(roomy, false, "no room while the commit is held");
  held.open();
  await room;
  assert.ok(batcher.queued <= 2, "the queue drained to half its bound");
  assert.equal(batcher.room(), null);
  await Promise.all([first, ...queued]);
  assert.deepEqual(await ids(database), ["a", "b", "c", "d", "held"]);
});

test("rows of a lane are written together, in the order queued, after the batch's other work", async (t) => {
  const database = await open(t);
  const calls: string[][] = [];
  const lane = {
    async write(tx: Transaction<DB>, rows: string[]) {
      calls.push(rows);
      for (const id of rows) await insert(id)(tx);
    },
  };
  const order: string[] = [];
  await Promise.all([
    database.batcher.add(lane, "r1"),
    database.batcher.run(async (tx) => {
      order.push(`work sees ${(await tx.selectFrom("readiness").select("id").execute()).length} rows`);
    }),
    database.batcher.add(lane, "r2"),
  ]);
  assert.deepEqual(calls, [["r1", "r2"]], "one call for the lane's rows of the batch");
  assert.deepEqual(order, ["work sees 0 rows"]);
  const results = await Promise.allSettled([
    database.batcher.add(lane, "r3"),
    database.batcher.add(lane, "r1"),
  ]);
  assert.deepEqual(
    results.map((r) => r.status),
    ["fulfilled", "rejected"],
    "a bad row fails alone",
  );
  assert.deepEqual(await ids(database), ["r1", "r2", "r3"]);
});

/** A lane whose rows wait `patienceMs` for company, recording the rows of each commit. */
function patientLane(patienceMs: number) {
  const commits: string[][] = [];
  return {
    commits,
    lane: {
      patienceMs,
      async write(tx: Transaction<DB>, rows: string[]) {
        commits.push(rows);
        for (const id of rows) await insert(id)(tx);
      },
    },
  };
}

const nextTurn = () => new Promise((r) => setImmediate(r));

test("rows of a patient lane queued in different turns share a commit, which any other write brings forward", async (t) => {
  const database = await open(t);
  const { lane, commits } = patientLane(60_000);
  const first = database.batcher.add(lane, "p1");
  await nextTurn();
  await nextTurn();
  const second = database.batcher.add(lane, "p2");
  await nextTurn();
  assert.deepEqual(commits, [], "patient rows wait for company");
  assert.equal(database.batcher.queued, 2);
  await database.batcher.run(insert("urgent"));
  await Promise.all([first, second]);
  assert.deepEqual(commits, [["p1", "p2"]], "the other write's commit took them along");
  assert.deepEqual(await ids(database), ["p1", "p2", "urgent"]);
});

test("a patient row alone is committed once its patience is over, and drain() does not wait for it", async (t) => {
  const database = await open(t);
  const short = patientLane(5);
  await database.batcher.add(short.lane, "alone");
  assert.deepEqual(short.commits, [["alone"]]);
  const long = patientLane(60_000);
  const waiting = database.batcher.add(long.lane, "drained");
  await database.batcher.drain();
  await waiting;
  assert.deepEqual(long.commits, [["drained"]]);
  assert.deepEqual(await ids(database), ["alone", "drained"]);
});

/** A write whose transaction keeps the thread busy for `ms`, as a commit on a slow disk does. */
const slow =
  (id: string, ms: number) =>
  (tx: Transaction<DB>): Promise<void> => {
    const until = performance.now() + ms;
    while (performance.now() < until);
    return insert(id)(tx);
  };

/** Whether `write` settles within `turns` turns of the event loop (no timer can fire meanwhile). */
async function settlesWithin(write: Promise<void>, turns: number): Promise<boolean> {
  let settled = false;
  const settle = () => {
    settled = true;
  };
  write.then(settle, settle);
  for (let i = 0; i < turns && !settled; i++) await nextTurn();
  return settled;
}

test("one slow commit does not hold back the next one; commits that stay slow space the next ones", async (t) => {
  const database = await open(t);
  const batcher = new WriteBatcher(database.db);
  // Spacing is a timer: with timers frozen, a spaced commit cannot start until time is advanced.
  t.mock.timers.enable({ apis: ["setTimeout"] });
  await batcher.run(slow("slow-1", 15));
  assert.ok(await settlesWithin(batcher.run(insert("after-one-slow")), 50), "committed at once");

  for (const id of ["slow-2", "slow-3", "slow-4"]) {
    const write = batcher.run(slow(id, 15));
    if (!(await settlesWithin(write, 50))) t.mock.timers.tick(10);
    await write;
  }
  const spaced = batcher.run(insert("after-three-slow"));
  assert.equal(await settlesWithin(spaced, 50), false, "waits for the spacing");
  t.mock.timers.tick(10);
  await spaced;
  assert.deepEqual(await ids(database), [
    "after-one-slow",
    "after-three-slow",
    "slow-1",
    "slow-2",
    "slow-3",
    "slow-4",
  ]);
});

test("a commit's multi-row statements keep their undo copies in memory, not in a temporary file", async (t) => {
  const database = await open(t);
  const [row] = (await sql<{ tempStore: number }>`PRAGMA temp_store`.execute(database.db)).rows;
  assert.equal(Number(row?.tempStore), 2, "temp_store = MEMORY on the connection the batcher writes through");
  const many = Array.from({ length: 300 }, (_, i) => ({
    id: `r${String(i).padStart(3, "0")}`,
    checkedAt: i,
  }));
  await database.batcher.run((tx) =>
    tx
      .insertInto("readiness")
      .values(many)
      .execute()
      .then(() => {}),
  );
  assert.equal((await ids(database)).length, 300);
});
