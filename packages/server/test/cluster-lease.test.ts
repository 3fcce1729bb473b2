// The instance lease against PostgreSQL. Lease times are the database's clock: the test moves
// time by moving every lease back (as if the database's clock had moved on).
import assert from "node:assert/strict";
import { type TestContext, test } from "node:test";
import { sql } from "kysely";
import { InstanceLease } from "../src/cluster/lease.ts";
import { clusterRepository } from "../src/cluster/repository.ts";
import { openDatabase } from "../src/db/database.ts";
import { databaseNow } from "../src/db/now.ts";
import { postgresUrl } from "./helpers/postgres.ts";
import { tempDir } from "./helpers/server.ts";

const start = 1_800_000_000_000;

async function setup(t: TestContext) {
  const databaseUrl = await postgresUrl(t);
  if (!databaseUrl) return null;
  const database = await openDatabase({ dataDir: tempDir(t), databaseUrl, writeQueueMaxRows: 1_000 });
  t.after(() => database.close());
  const { db } = database;
  const repo = clusterRepository(db);
  const calls: string[] = [];
  const warnings: string[] = [];
  const errors: unknown[] = [];
  t.after(() => assert.deepEqual(errors, [], "no lease error"));
  const lease = (instanceId: string, connected: { deviceId: string; generation: number }[] = []) =>
    new InstanceLease({
      repo,
      instanceId,
      leaseSeconds: 10,
      log: {
        info: () => {},
        warn: (m) => void warnings.push(m),
        error: ({ err }) => void errors.push(err),
      },
      devices: {
        markOfflineExcept: async (live) => void calls.push(`${instanceId}: offline except [${live.sort()}]`),
        instanceLost: async (dead, devices) =>
          void calls.push(`${instanceId}: ${dead} is dead [${devices.map((d) => d.id).sort()}]`),
        leftAtStop: async (devices) =>
          void calls.push(`${instanceId}: left at stop [${devices.map((d) => d.id).sort()}]`),
        reclaimed: async (taken, lost) =>
          void calls.push(`${instanceId}: reclaimed [${taken.sort()}], let go [${lost.sort()}]`),
      },
      connected: () => connected,
    });
  /** Each instance and the seconds left on its lease, by the database's clock. */
  const rows = async () =>
    (
      await db
        .selectFrom("instances")
        .select(["id", sql<number>`${sql.ref("leaseUntil")} - ${databaseNow(db)}`.as("left")])
        .orderBy("id")
        .execute()
    ).map((r) => `${r.id} ${Math.round(Number(r.left) / 1000)}`);
  return {
    db,
    lease,
    calls,
    warnings,
    errors,
    rows,
    advance: async (seconds: number) => {
      await db
        .updateTable("instances")
        .set((eb) => ({ leaseUntil: eb("leaseUntil", "-", seconds * 1000) }))
        .execute();
    },
  };
}

test("lease: boot writes the row and keeps the devices of live instances; renewals extend it; a clean stop removes it, a halt does not", async (t) => {
  const s = await setup(t);
  if (!s) return;
  const a = s.lease("i-a");
  await a.begin();
  assert.deepEqual(await s.rows(), ["i-a 10"]);
  assert.deepEqual(s.calls, ["i-a: offline except []"]);
  await s.advance(3);
  const b = s.lease("i-b");
  await b.begin();
  assert.deepEqual(s.calls.at(-1), "i-b: offline except [i-a]", "A is alive: its devices stay online");
  await s.advance(3);
  await a.renew();
  assert.deepEqual(await s.rows(), ["i-a 10", "i-b 7"]);
  await a.stop();
  assert.deepEqual(await s.rows(), ["i-b 7"]);
  await b.halt();
  await b.stop();
  assert.deepEqual(await s.rows(), ["i-b 7"], "a halted instance leaves its row, as a crashed one would");
  // A restart with the same INSTANCE_ID: its previous life's devices are not kept for it.
  const again = s.lease("i-b");
  await again.begin();
  assert.deepEqual(s.calls.at(-1), "i-b: offline except []");
  assert.deepEqual(await s.rows(), ["i-b 10"]);
});

test("lease: a dead instance is swept once, by one of the instances renewing at the same moment", async (t) => {
  const s = await setup(t);
  if (!s) return;
  const leases = ["i-a", "i-b", "i-c"].map((id) => s.lease(id));
  for (const lease of leases) await lease.begin();
  s.calls.length = 0;
  await s.advance(5);
  await Promise.all(leases.slice(0, 2).map((l) => l.renew()));
  await s.advance(6); // i-c renewed last at 0 s: its lease ended at 10 s
  await Promise.all(leases.slice(0, 2).map((l) => l.renew()));
  const swept = s.calls.filter((c) => c.includes("i-c is dead"));
  assert.equal(swept.length, 1, s.calls.join("\n"));
  assert.deepEqual(await s.rows(), ["i-a 10", "i-b 10"]);
  assert.equal(s.warnings.filter((w) => w.includes("instance i-c stopped renewing its lease")).length, 1);
});

/** A user, a project and devices online on instances: `[id, instanceId, claimSeq]`. */
async function onlineDevices(
  db: Awaited<ReturnType<typeof setup>> & {},
  devices: [string, string, number][],
) {
  const now = start;
  await db.db
    .insertInto("users")
    .values({
      id: "usr_1",
      email: "a@example.com",
      passwordHash: "x",
      role: "admin",
      createdAt: now,
      updatedAt: now,
    })
    .execute();
  await db.db
    .insertInto("projects")
    .values({ id: "prj_1", ownerId: "usr_1", name: "P", createdAt: now, updatedAt: now })
    .execute();
  for (const [id, instanceId, claimSeq] of devices)
    await db.db
      .insertInto("devices")
      .values({
        id,
        projectId: "prj_1",
        name: id,
        board: "pico_w",
        secretHash: "x",
        lastSeenAt: null,
        firmwareVersion: null,
        createdAt: now,
        updatedAt: now,
        status: "online",
        instanceId,
        claimSeq,
      })
      .execute();
}

const presence = (s: { db: Awaited<ReturnType<typeof setup>> & {} }["db"]) =>
  s.db.selectFrom("devices").select(["id", "status", "instanceId"]).orderBy("id").execute();

test("lease: an instance taken for dead while it was not takes back its devices still offline, not those that moved", async (t) => {
  const s = await setup(t);
  if (!s) return;
  await onlineDevices(s, [
    ["dev_1", "i-a", 1],
    ["dev_2", "i-a", 1],
    ["dev_3", "i-a", 1],
  ]);
  const a = s.lease(
    "i-a",
    ["dev_1", "dev_2", "dev_3"].map((deviceId) => ({ deviceId, generation: 1 })),
  );
  const b = s.lease("i-b");
  await a.begin();
  await b.begin();
  // A's renewals stall past its lease (a paused process): B takes it for dead.
  await s.advance(11);
  await b.renew();
  assert.deepEqual(await s.rows(), ["i-b 10"]);
  assert.ok(s.calls.includes("i-b: i-a is dead [dev_1,dev_2,dev_3]"), s.calls.join("\n"));
  // Meanwhile dev_2 reconnected to B, and dev_3 opened a newer connection (not online yet).
  await s.db
    .updateTable("devices")
    .set({ status: "online", instanceId: "i-b", claimSeq: 2 })
    .where("id", "=", "dev_2")
    .execute();
  await s.db.updateTable("devices").set({ claimSeq: 2 }).where("id", "=", "dev_3").execute();
  await a.renew();
  assert.deepEqual(await s.rows(), ["i-a 10", "i-b 10"]);
  assert.deepEqual(await presence(s), [
    { id: "dev_1", status: "online", instanceId: "i-a" },
    { id: "dev_2", status: "online", instanceId: "i-b" },
    { id: "dev_3", status: "offline", instanceId: null },
  ]);
  assert.equal(s.calls.at(-1), "i-a: reclaimed [dev_1], let go [dev_2,dev_3]");
  assert.match(
    s.warnings.at(-1) ?? "",
    /instance i-a: its lease had expired .* 1 device\(s\) online here again, 2 let go/,
  );
});

test("lease: a sweep that fails halfway leaves the dead instance for the next one, its devices still to take offline", async (t) => {
  const s = await setup(t);
  if (!s) return;
  await onlineDevices(s, [
    ["dev_1", "i-a", 1],
    ["dev_2", "i-a", 1],
  ]);
  const a = s.lease("i-a");
  const b = s.lease("i-b");
  await a.begin();
  await b.begin();
  await s.advance(11);
  // Taking the devices offline fails (a lost connection, a full disk): nothing of the sweep stays.
  await sql`create function refuse_offline() returns trigger language plpgsql as $$
    begin raise exception 'refused'; end $$`.execute(s.db);
  await sql`create trigger refuse_offline before update on devices for each row execute function refuse_offline()`.execute(
    s.db,
  );
  await b.renew();
  assert.equal(s.errors.length, 1);
  s.errors.length = 0;
  assert.deepEqual(
    (await s.rows()).map((r) => r.split(" ")[0]),
    ["i-a", "i-b"],
    "the dead instance's row is still there",
  );
  assert.equal(s.calls.filter((c) => c.includes("is dead")).length, 0);
  await sql`drop trigger refuse_offline on devices`.execute(s.db);
  await b.renew();
  assert.deepEqual(await s.rows(), ["i-b 10"]);
  assert.ok(s.calls.includes("i-b: i-a is dead [dev_1,dev_2]"), s.calls.join("\n"));
  assert.deepEqual(await presence(s), [
    { id: "dev_1", status: "offline", instanceId: null },
    { id: "dev_2", status: "offline", instanceId: null },
  ]);
});

test("lease: a clean stop takes offline, with its row, the devices still online on the instance", async (t) => {
  const s = await setup(t);
  if (!s) return;
  await onlineDevices(s, [
    ["dev_1", "i-a", 1],
    ["dev_2", "i-b", 1],
  ]);
  const a = s.lease("i-a");
  const b = s.lease("i-b");
  await b.begin();
  await a.begin();
  // dev_1's hello completed while A stopped, after the device link took its devices offline.
  await a.stop();
  assert.deepEqual(await s.rows(), ["i-b 10"]);
  assert.equal(s.calls.at(-1), "i-a: left at stop [dev_1]");
  assert.deepEqual(await presence(s), [
    { id: "dev_1", status: "offline", instanceId: null },
    { id: "dev_2", status: "online", instanceId: "i-b" },
  ]);
});
