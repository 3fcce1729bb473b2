// Durable commits on SQLite: a write settles only once its commit is flushed to disk, the flush
// runs off the connection (others use it meanwhile), and flushes are shared.
import assert from "node:assert/strict";
import path from "node:path";
import { type TestContext, test } from "node:test";
import { Kysely, sql } from "kysely";
import { DurableSqliteDialect, groupFlush, walFlush } from "../src/db/durable-sqlite.ts";
import { openSqlite } from "../src/db/sqlite-adapter.ts";
import { tempDir } from "./helpers/server.ts";

interface Schema {
  notes: { id: string };
}

/** A flush held open until the test lets it go, counting how often it ran. */
function heldFlush() {
  const state = { started: 0, done: 0, release: () => {} };
  const flush = () => {
    state.started++;
    return new Promise<void>((resolve) => {
      state.release = () => {
        state.done++;
        resolve();
      };
    });
  };
  return { state, flush };
}

function open(t: TestContext, flush: () => Promise<void>) {
  const file = path.join(tempDir(t, "sdk-durable-"), "test.db");
  const sqlite = openSqlite(file, 1_000);
  sqlite.raw.exec("CREATE TABLE notes (id TEXT PRIMARY KEY)");
  const db = new Kysely<Schema>({ dialect: new DurableSqliteDialect({ database: sqlite }, flush) });
  t.after(() => db.destroy());
  return { db, file };
}

const settledYet = async (promise: Promise<unknown>) => {
  let settled = false;
  void promise.then(
    () => {
      settled = true;
    },
    () => {
      settled = true;
    },
  );
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  return settled;
};

test("a write settles only once its commit is flushed, and others use the connection meanwhile", async (t) => {
  const { state, flush } = heldFlush();
  const { db } = open(t, flush);
  const write = db.insertInto("notes").values({ id: "a" }).execute();
  assert.equal(await settledYet(write), false, "not done before the flush");
  assert.equal(state.started, 1);
  const rows = await db.selectFrom("notes").select("id").execute();
  assert.deepEqual(
    rows.map((r) => r.id),
    ["a"],
    "a read ran (and saw the commit) while the flush was under way",
  );
  assert.equal(state.started, 1, "a read does not flush");
  state.release();
  await write;
  assert.equal(state.done, 1);
});

test("a transaction flushes once, after its commit; reads never flush", async (t) => {
  let flushes = 0;
  const { db } = open(t, async () => {
    flushes++;
  });
  await db.transaction().execute(async (tx) => {
    await tx.insertInto("notes").values({ id: "a" }).execute();
    await tx.insertInto("notes").values({ id: "b" }).execute();
    assert.equal(flushes, 0, "nothing flushed inside the transaction");
  });
  assert.equal(flushes, 1);
  await assert.rejects(
    db.transaction().execute(async (tx) => {
      await tx.insertInto("notes").values({ id: "c" }).execute();
      throw new Error("changed my mind");
    }),
    /changed my mind/,
  );
  const ids = (await db.selectFrom("notes").select("id").orderBy("id").execute()).map((r) => r.id);
  assert.deepEqual(ids, ["a", "b"]);
  const before = flushes;
  await sql`select count(*) from notes`.execute(db);
  await db.selectFrom("notes").selectAll().execute();
  assert.equal(flushes, before, "reads add no flushes");
});

test("callers that arrive while a flush runs share the next one", async () => {
  let runs = 0;
  const gates: (() => void)[] = [];
  const shared = groupFlush(() => {
    runs++;
    return new Promise<void>((resolve) => gates.push(resolve));
  });
  const first = shared();
  const waiting = [shared(), shared(), shared()];
  assert.equal(runs, 1, "the later callers wait: their commits may postdate the running flush");
  gates.shift()!();
  await first;
  while (runs < 2) await new Promise((r) => setImmediate(r));
  assert.equal(runs, 2, "one more flush for all three");
  gates.shift()!();
  await Promise.all(waiting);
  assert.equal(runs, 2);
});

test("the real flush syncs the database's write-ahead log", async (t) => {
  const { db, file } = open(t, () => Promise.resolve());
  await db.insertInto("notes").values({ id: "a" }).execute();
  await walFlush(file)();
  await walFlush(path.join(path.dirname(file), "no-such.db"))().then(
    () => assert.fail("a missing database cannot be flushed"),
    (error: NodeJS.ErrnoException) => assert.equal(error.code, "ENOENT"),
  );
});
