// The instance lease against PostgreSQL, with a clock the test moves.
import assert from "node:assert/strict";
import { type TestContext, test } from "node:test";
import { InstanceLease } from "../src/cluster/lease.ts";
import { clusterRepository } from "../src/cluster/repository.ts";
import { openDatabase } from "../src/db/database.ts";
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
  let now = start;
  const clock = { now: () => now };
  const calls: string[] = [];
  const warnings: string[] = [];
  const lease = (instanceId: string, connected: string[] = []) =>
    new InstanceLease({
      repo,
      clock,
      instanceId,
      leaseSeconds: 10,
      log: {
        info: () => {},
        warn: (m) => void warnings.push(m),
        error: ({ err }) => assert.fail(err as Error),
      },
      devices: {
        markOfflineExcept: async (live) => void calls.push(`${instanceId}: offline except [${live.sort()}]`),
        markInstanceOffline: async (dead) => void calls.push(`${instanceId}: ${dead} is dead`),
      },
      connected: () => connected,
    });
  const rows = async () =>
    (await db.selectFrom("instances").select(["id", "leaseUntil"]).orderBy("id").execute()).map(
      (r) => `${r.id} ${(r.leaseUntil - start) / 1000}`,
    );
  return {
    db,
    lease,
    calls,
    warnings,
    rows,
    advance: (seconds: number) => {
      now += seconds * 1000;
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
  s.advance(3);
  const b = s.lease("i-b");
  await b.begin();
  assert.deepEqual(s.calls.at(-1), "i-b: offline except [i-a]", "A is alive: its devices stay online");
  s.advance(3);
  await a.renew();
  assert.deepEqual(await s.rows(), ["i-a 16", "i-b 13"]);
  await a.stop();
  assert.deepEqual(await s.rows(), ["i-b 13"]);
  await b.halt();
  await b.stop();
  assert.deepEqual(await s.rows(), ["i-b 13"], "a halted instance leaves its row, as a crashed one would");
  // A restart with the same INSTANCE_ID: its previous life's devices are not kept for it.
  const again = s.lease("i-b");
  await again.begin();
  assert.deepEqual(s.calls.at(-1), "i-b: offline except []");
  assert.deepEqual(await s.rows(), ["i-b 16"]);
});

test("lease: a dead instance is swept once, by one of the instances renewing at the same moment", async (t) => {
  const s = await setup(t);
  if (!s) return;
  const leases = ["i-a", "i-b", "i-c"].map((id) => s.lease(id));
  for (const lease of leases) await lease.begin();
  s.calls.length = 0;
  s.advance(5);
  await Promise.all(leases.slice(0, 2).map((l) => l.renew()));
  s.advance(6); // i-c renewed last at 0 s: its lease ended at 10 s
  await Promise.all(leases.slice(0, 2).map((l) => l.renew()));
  const swept = s.calls.filter((c) => c.endsWith("i-c is dead"));
  assert.equal(swept.length, 1, s.calls.join("\n"));
  assert.deepEqual(await s.rows(), ["i-a 21", "i-b 21"]);
  assert.equal(s.warnings.filter((w) => w.includes("instance i-c stopped renewing its lease")).length, 1);
});

test("lease: an instance taken for dead while it was not takes its lease and its devices back", async (t) => {
  const s = await setup(t);
  if (!s) return;
  const now = start;
  await s.db
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
  await s.db
    .insertInto("projects")
    .values({ id: "prj_1", ownerId: "usr_1", name: "P", createdAt: now, updatedAt: now })
    .execute();
  for (const id of ["dev_1", "dev_2"])
    await s.db
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
      })
      .execute();
  const a = s.lease("i-a", ["dev_1"]);
  const b = s.lease("i-b");
  await a.begin();
  await b.begin();
  // A's renewals stall past its lease (a paused process): B takes it for dead.
  s.advance(11);
  await b.renew();
  assert.deepEqual(await s.rows(), ["i-b 21"]);
  assert.ok(s.calls.includes("i-b: i-a is dead"));
  await a.renew();
  assert.deepEqual(await s.rows(), ["i-a 21", "i-b 21"]);
  const devices = await s.db
    .selectFrom("devices")
    .select(["id", "status", "instanceId"])
    .orderBy("id")
    .execute();
  assert.deepEqual(devices, [
    { id: "dev_1", status: "online", instanceId: "i-a" },
    { id: "dev_2", status: "offline", instanceId: null },
  ]);
  assert.match(
    s.warnings.at(-1) ?? "",
    /instance i-a: its lease had expired .* 1 device\(s\) online here again/,
  );
});
