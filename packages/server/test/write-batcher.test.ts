// The write batcher on a real SQLite file, committing through the writer thread (commitThread "on"): group commit,
// order, one bad write failing alone, and the barrier reads use.
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { type TestContext, test } from "node:test";
import { type CompiledQuery, sql } from "kysely";
import { type Database, openDatabase } from "../src/db/database.ts";
import { type Committer, type Lane, WriteBatcher } from "../src/db/write-batcher.ts";
import { tempDir } from "./helpers/server.ts";

/** A database whose group commit runs in the writer thread. */
async function open(t: TestContext, sqliteBusyTimeoutMs = 60_000): Promise<Database & { file: string }> {
  const dataDir = tempDir(t, "sdk-batcher-");
  // A generous busy timeout by default: some tests hold the write lock from another connection meanwhile.
  const database = await openDatabase({
    dataDir,
    databaseUrl: null,
    sqliteBusyTimeoutMs,
    commitThread: "on",
  });
  t.after(() => database.close());
  return Object.assign(database, { file: database.location });
}

/** The readiness table is the simplest one: (id primary key, checked_at). */
const inserter =
  (database: Database) =>
  (id: string, checkedAt = 0) =>
    database.db.insertInto("readiness").values({ id, checkedAt }).compile();

async function ids(database: Database): Promise<string[]> {
  const rows = await database.db.selectFrom("readiness").select("id").orderBy("id").execute();
  return rows.map((r) => r.id);
}

/** Another connection holding SQLite's write lock until `release()`: the batcher's commit waits. */
function holdWriteLock(t: TestContext, database: Database & { file: string }) {
  const other = new DatabaseSync(database.file);
  t.after(() => other.close());
  other.exec("BEGIN IMMEDIATE");
  return { release: () => other.exec("COMMIT") };
}

/** The committer, counting the transactions it is given. */
function counting(committer: Committer) {
  const transactions: number[] = [];
  return {
    transactions,
    committer: {
      commit: (txs: CompiledQuery[][]) => {
        for (const tx of txs) transactions.push(tx.length);
        return committer.commit(txs);
      },
    } satisfies Committer,
  };
}

const nextTurn = () => new Promise((r) => setImmediate(r));

test("writes queued in one turn share one transaction and each settles when committed", async (t) => {
  const database = await open(t);
  const insert = inserter(database);
  const { committer, transactions } = counting(database.committer);
  const batcher = new WriteBatcher(committer);
  await Promise.all(["a", "b", "c"].map((id) => batcher.run(insert(id))));
  assert.deepEqual(transactions, [3], "one transaction for the three writes");
  assert.deepEqual(await ids(database), ["a", "b", "c"]);
});

test("writes run in the order they were queued, across batches", async (t) => {
  const database = await open(t);
  await database.db.insertInto("readiness").values({ id: "counter", checkedAt: 0 }).execute();
  const { committer, transactions } = counting(database.committer);
  const batcher = new WriteBatcher(committer, 2);
  const step = (value: number) =>
    database.db
      .updateTable("readiness")
      .set((eb) => ({ checkedAt: eb(eb("checkedAt", "*", 10), "+", value) }))
      .where("id", "=", "counter");
  await Promise.all([1, 2, 3, 4, 5].map((v) => batcher.run(step(v))));
  assert.deepEqual(transactions, [2, 2, 1], "batches of two at most");
  const row = await database.db
    .selectFrom("readiness")
    .select("checkedAt")
    .where("id", "=", "counter")
    .executeTakeFirstOrThrow();
  assert.equal(row.checkedAt, 12345, "each write saw the one queued before it");
});

test("a failing write fails alone: the batch is retried one by one and the good writes commit", async (t) => {
  const database = await open(t);
  const insert = inserter(database);
  await database.db.insertInto("readiness").values({ id: "taken", checkedAt: 0 }).execute();
  const results = await Promise.allSettled([
    database.batcher.run(insert("good-1")),
    database.batcher.run(insert("taken")),
    database.batcher.run(insert("half"), insert("taken")),
    database.batcher.run(insert("good-2")),
  ]);
  assert.deepEqual(
    results.map((r) => r.status),
    ["fulfilled", "rejected", "rejected", "fulfilled"],
  );
  for (const failed of [results[1], results[2]])
    assert.match(String((failed as PromiseRejectedResult).reason), /UNIQUE/i);
  assert.deepEqual(
    await ids(database),
    ["good-1", "good-2", "taken"],
    "the failed writes left nothing behind (not the first half of the third)",
  );

  await database.batcher.run(insert("after"));
  assert.ok((await ids(database)).includes("after"), "the batcher keeps working after a failed batch");
});

test("the barrier resolves at once when nothing is queued", async (t) => {
  const database = await open(t);
  await database.batcher.barrier();
  await database.batcher.run(inserter(database)("a"));
  await database.batcher.barrier();
});

test("the barrier waits for the writes queued before it, so a read after it sees them", async (t) => {
  const database = await open(t);
  const lock = holdWriteLock(t, database);
  const write = database.batcher.run(inserter(database)("before"));
  const barrier = database.batcher.barrier();
  let passed = false;
  void barrier.then(() => {
    passed = true;
  });
  for (let i = 0; i < 20; i++) await nextTurn();
  assert.equal(passed, false, "the barrier is not passed while an earlier write is uncommitted");
  assert.deepEqual(await ids(database), [], "a read meanwhile does not wait for the writer");
  lock.release();
  await barrier;
  assert.deepEqual(await ids(database), ["before"]);
  await write;
});

test("the barrier does not wait for writes queued after it", async (t) => {
  const database = await open(t);
  const insert = inserter(database);
  const lock = holdWriteLock(t, database);
  const before = database.batcher.run(insert("before"));
  await nextTurn();
  await nextTurn();
  assert.equal(database.batcher.queued, 0, "the first commit is under way");
  let passed = false;
  const barrier = database.batcher.barrier().then(() => {
    passed = true;
  });
  const after = database.batcher.run(insert("after"));
  let passedWhenLaterCommitted: boolean | undefined;
  const later = after.then(() => {
    passedWhenLaterCommitted = passed;
  });
  lock.release();
  await Promise.all([before, barrier, later]);
  assert.equal(passedWhenLaterCommitted, true, "the barrier passed once the write before it committed");
});

test("room() asks writers to wait while the queue is at its bound and lets them go once it has drained", async (t) => {
  const database = await open(t);
  const insert = inserter(database);
  const batcher = new WriteBatcher(database.committer, { maxBatch: 2, maxQueued: 4 });
  const lock = holdWriteLock(t, database);
  const first = batcher.run(insert("held"));
  await nextTurn();
  await nextTurn();
  assert.equal(batcher.queued, 0, "the first commit is under way");
  assert.equal(batcher.room(), null, "room while below the bound");
  const queued = ["a", "b", "c", "d"].map((id) => batcher.run(insert(id)));
  const room = batcher.room();
  assert.ok(room, "at the bound, writers are asked to wait");
  assert.equal(batcher.room(), room, "every writer waits for the same room");
  let roomy = false;
  void room.then(() => {
    roomy = true;
  });
  for (let i = 0; i < 20; i++) await nextTurn();
  assert.equal(roomy, false, "no room while the commit is held");
  lock.release();
  await room;
  assert.ok(batcher.queued <= 2, "the queue drained to half its bound");
  assert.equal(batcher.room(), null);
  await Promise.all([first, ...queued]);
  assert.deepEqual(await ids(database), ["a", "b", "c", "d", "held"]);
});

test("rows of a lane are written together, in the order queued, after the batch's other statements", async (t) => {
  const database = await open(t);
  const insert = inserter(database);
  const calls: string[][] = [];
  const seen: number[] = [];
  const lane: Lane<string> = {
    plan(rows) {
      calls.push(rows);
      const count = database.db
        .selectFrom("readiness")
        .select((eb) => eb.fn.countAll<number>().as("n"))
        .compile();
      return {
        statements: [count, ...rows.map((id) => insert(id))],
        committed(results) {
          seen.push(Number((results[0]!.rows[0] as { n: number }).n));
          assert.equal(results.length, rows.length + 1, "the lane's own statements' results");
        },
      };
    },
  };
  await Promise.all([
    database.batcher.add(lane, "r1"),
    database.batcher.run(insert("w")),
    database.batcher.add(lane, "r2"),
  ]);
  assert.deepEqual(calls, [["r1", "r2"]], "one plan for the lane's rows of the batch");
  assert.deepEqual(seen, [1], "the lane's statements ran after the other write's");
  const results = await Promise.allSettled([
    database.batcher.add(lane, "r3"),
    database.batcher.add(lane, "r1"),
  ]);
  assert.deepEqual(
    results.map((r) => r.status),
    ["fulfilled", "rejected"],
    "a bad row fails alone",
  );
  assert.deepEqual(await ids(database), ["r1", "r2", "r3", "w"]);
});

/** A lane whose rows wait `patienceMs` for company, recording the rows of each commit. */
function patientLane(database: Database, patienceMs: number) {
  const commits: string[][] = [];
  const insert = inserter(database);
  const lane: Lane<string> = {
    patienceMs,
    plan(rows) {
      commits.push(rows);
      return { statements: rows.map((id) => insert(id)) };
    },
  };
  return { commits, lane };
}

test("rows of a patient lane queued in different turns share a commit, which any other write brings forward", async (t) => {
  const database = await open(t);
  const { lane, commits } = patientLane(database, 60_000);
  const first = database.batcher.add(lane, "p1");
  await nextTurn();
  await nextTurn();
  const second = database.batcher.add(lane, "p2");
  await nextTurn();
  assert.deepEqual(commits, [], "patient rows wait for company");
  assert.equal(database.batcher.queued, 2);
  await database.batcher.run(inserter(database)("urgent"));
  await Promise.all([first, second]);
  assert.deepEqual(commits, [["p1", "p2"]], "the other write's commit took them along");
  assert.deepEqual(await ids(database), ["p1", "p2", "urgent"]);
});

test("a patient row alone is committed once its patience is over, and drain() does not wait for it", async (t) => {
  const database = await open(t);
  const short = patientLane(database, 5);
  await database.batcher.add(short.lane, "alone");
  assert.deepEqual(short.commits, [["alone"]]);
  const long = patientLane(database, 60_000);
  const waiting = database.batcher.add(long.lane, "drained");
  await database.batcher.drain();
  await waiting;
  assert.deepEqual(long.commits, [["drained"]]);
  assert.deepEqual(await ids(database), ["alone", "drained"]);
});

/**
 * Three slow commits in a row through a batcher whose committer says whether it waits off the
 * event loop; whether the next write is then sent at once (not spaced).
 */
async function afterThreeSlowCommits(t: TestContext, offLoop: boolean): Promise<boolean> {
  const database = await open(t);
  const insert = inserter(database);
  // A statement that keeps the writer busy for well over a millisecond on any machine.
  const slow =
    sql`WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 300000) SELECT count(*) FROM c`.compile(
      database.db,
    );
  const batcher = new WriteBatcher({ commit: (txs) => database.committer.commit(txs), offLoop });
  // Spacing is a timer: with timers frozen, a spaced commit cannot start until time is advanced.
  // A commit straight through the same writer thread shows whether this batcher's was sent: the
  // thread answers in the order it was asked.
  t.mock.timers.enable({ apis: ["setTimeout"] });
  const sentBefore = async (write: Promise<void>) => {
    let settled = false;
    void write.then(() => {
      settled = true;
    });
    // The previous commit's end schedules the next flush in an immediate: let it run first.
    for (let i = 0; i < 3; i++) await nextTurn();
    const [probe] = await database.committer.commit([[insert(`probe-${Math.random()}`)]]);
    assert.ok(probe?.ok);
    return settled;
  };
  await batcher.run(slow, insert("slow-1"));
  assert.ok(await sentBefore(batcher.run(insert("after-one-slow"))), "committed at once");

  for (const id of ["slow-2", "slow-3", "slow-4"]) {
    const write = batcher.run(slow, insert(id));
    if (!(await sentBefore(write))) t.mock.timers.tick(10);
    await write;
  }
  const next = batcher.run(insert("after-three-slow"));
  const sentAtOnce = await sentBefore(next);
  if (!sentAtOnce) {
    assert.equal(batcher.queued, 1);
    t.mock.timers.tick(10);
  }
  await next;
  assert.deepEqual(
    (await ids(database)).filter((id) => !id.startsWith("probe-")),
    ["after-one-slow", "after-three-slow", "slow-1", "slow-2", "slow-3", "slow-4"],
  );
  return sentAtOnce;
}

test("on the event loop's thread, one slow commit does not hold back the next one; commits that stay slow space the next ones", async (t) => {
  assert.equal(await afterThreeSlowCommits(t, false), false, "waits for the spacing");
});

test("commits that wait off the event loop (the writer thread) are never spaced", async (t) => {
  assert.equal(await afterThreeSlowCommits(t, true), true, "sent at once after three slow commits");
  const database = await open(t);
  assert.equal(database.committer.offLoop, true, "the database's committer says so while its thread runs");
  assert.equal(database.commits.thread, true, "and so does the database (the listening line)");
  await database.close();
  assert.equal(database.committer.offLoop, false, "and no longer once closed");
  assert.equal(database.commits.thread, false);
});

test("the writer thread's connection syncs each commit, checks foreign keys and keeps undo copies in memory", async (t) => {
  const database = await open(t);
  const pragma = (name: string) => sql.raw(`PRAGMA ${name}`).compile(database.db);
  const [outcome] = await database.committer.commit([
    [pragma("synchronous"), pragma("foreign_keys"), pragma("temp_store"), pragma("journal_mode")],
  ]);
  assert.ok(outcome?.ok);
  const values = outcome.results.map((r) => Object.values(r.rows[0] as object)[0]);
  assert.deepEqual(values, [2, 1, 2, "wal"], "synchronous FULL, foreign keys on, temp_store MEMORY, WAL");
  // A multi-row statement of 300 rows in a transaction: its undo copies (past 64 KB) stay in memory.
  const many = Array.from({ length: 300 }, (_, i) => ({
    id: `r${String(i).padStart(3, "0")}`,
    checkedAt: i,
  }));
  await database.batcher.run(database.db.insertInto("readiness").values(many));
  assert.equal((await ids(database)).length, 300);
});

test("a transaction on the main connection that reads, then writes, waits for the writer thread instead of failing", async (t) => {
  const database = await open(t);
  const insert = inserter(database);
  let stop = false;
  let n = 0;
  const traffic = (async () => {
    while (!stop) await database.batcher.run(insert(`b-${n++}`));
  })();
  for (let i = 0; i < 50; i++) {
    await database.db.transaction().execute(async (tx) => {
      await tx.selectFrom("readiness").select("id").limit(1).execute();
      await nextTurn(); // the writer thread would commit here
      await tx
        .insertInto("readiness")
        .values({ id: `m-${i}`, checkedAt: 0 })
        .execute();
    });
  }
  stop = true;
  await traffic;
  const all = await ids(database);
  assert.equal(all.filter((id) => id.startsWith("m-")).length, 50);
  assert.equal(all.filter((id) => id.startsWith("b-")).length, n);
});

test("writes queued before close() are committed; the database reopens with them", async (t) => {
  const dataDir = tempDir(t, "sdk-batcher-");
  const first = await openDatabase({ dataDir, databaseUrl: null, commitThread: "on" });
  const writes = ["x", "y"].map((id) => first.batcher.run(inserter(first)(id)));
  await first.close();
  await Promise.all(writes);
  const again = await openDatabase({ dataDir, databaseUrl: null, commitThread: "on" });
  t.after(() => again.close());
  assert.deepEqual(await ids(again), ["x", "y"]);
});

test("a commit waits for a write lock held longer than the main connection's busy timeout instead of losing its rows", async (t) => {
  // The main connection gives up after 20 ms; the writer thread must not.
  const database = await open(t, 20);
  const lock = holdWriteLock(t, database);
  const write = database.batcher.run(inserter(database)("kept"));
  let settled: string | undefined;
  write.then(
    () => {
      settled = "committed";
    },
    (error: unknown) => {
      settled = `failed: ${String(error)}`;
    },
  );
  // Well past the 20 ms, as a project's delete on the main connection holds the lock.
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(settled, undefined, "the commit is still waiting for the lock");
  lock.release();
  await write;
  assert.deepEqual(await ids(database), ["kept"]);
});

test("a write on the main connection waits for the writer thread's commit under way, not for the ones after it", async (t) => {
  const database = await open(t);
  const insert = inserter(database);
  // Commits that keep the thread busy for a while each, back to back.
  const slow =
    sql`WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 100000) SELECT count(*) FROM c`.compile(
      database.db,
    );
  const perCommit = 5;
  let stop = false;
  let n = 0;
  const traffic = (async () => {
    while (!stop) {
      const rows = Array.from({ length: perCommit }, () => insert(`b-${String(n++).padStart(6, "0")}`));
      await database.batcher.run(slow, ...rows);
    }
  })();
  const rowid = async (where: string) =>
    Number(
      Object.values(
        (await sql.raw(`SELECT max(rowid) FROM readiness ${where}`).execute(database.db)).rows[0] as object,
      )[0] ?? 0,
    );
  let most = 0;
  // 30 writes at least, and on for as long as the thread has not committed 20 times.
  let i = 0;
  for (; i < 30 || (n < 20 * perCommit && i < 1_000); i++) {
    const before = await rowid("");
    await database.db
      .insertInto("readiness")
      .values({ id: `m-${i}`, checkedAt: 0 })
      .execute();
    const mine = await rowid(`WHERE id = 'm-${i}'`);
    const between = await sql
      .raw(
        `SELECT count(*) AS n FROM readiness WHERE rowid > ${before} AND rowid < ${mine} AND id LIKE 'b-%'`,
      )
      .execute(database.db);
    most = Math.max(most, Number((between.rows[0] as { n: number }).n) / perCommit);
    await new Promise((r) => setTimeout(r, 5));
  }
  stop = true;
  await traffic;
  assert.ok(
    n >= 20 * perCommit,
    `the thread kept committing meanwhile (${n / perCommit} commits, ${i} writes)`,
  );
  assert.ok(
    most <= 2,
    `a main-connection write let at most 2 of the thread's commits go first (the most: ${most})`,
  );
});
