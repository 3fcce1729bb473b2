import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import path from "node:path";
import { DatabaseSync } from "node:sqlite";
import { Writable } from "node:stream";
import { type TestContext, test } from "node:test";
import { SdkApiError } from "@sdk/client";
import pino from "pino";
import type { Server } from "../src/app.ts";
import { sortableIdBefore } from "../src/lib/ids.ts";
import { projectsRepository } from "../src/repositories/projects.ts";
import { retentionRepository } from "../src/repositories/retention.ts";
import { retentionService } from "../src/services/retention.ts";
import { Sweeper } from "../src/services/sweeper.ts";
import { TestClock } from "./helpers/clock.ts";
import { postgresUrl } from "./helpers/postgres.ts";
import { raw, startTestServer, tempDir } from "./helpers/server.ts";

const code = (c: string) => (e: unknown) => e instanceof SdkApiError && e.code === c;
const dayMs = 86_400_000;

/** A sortable id made at `at` (newSortableId never goes back in time within a process; rows here do). */
const idAt = (prefix: string, at: number) =>
  `${sortableIdBefore(prefix, at)}${[...randomBytes(10)].map((b) => "234567abcdefghijklmnopqrstuvwxyz"[b & 31]).join("")}`;

/** Rows written straight into the tables (thousands through device sockets would be slow). */
async function addLogs(server: Server, deviceId: string, count: number, at: (i: number) => number) {
  const rows = Array.from({ length: count }, (_, i) => ({
    id: idAt("log", at(i)),
    deviceId,
    at: at(i),
    level: "info" as const,
    source: "device" as const,
    message: `line ${i} ${"x".repeat(200)}`,
  }));
  for (let i = 0; i < rows.length; i += 500)
    await server.database.db
      .insertInto("deviceLogs")
      .values(rows.slice(i, i + 500))
      .execute();
}

async function addHistory(
  server: Server,
  deviceId: string,
  entityId: string,
  count: number,
  at: (i: number) => number,
) {
  const rows = Array.from({ length: count }, (_, i) => ({
    id: idAt("sth", at(i)),
    deviceId,
    entityId,
    value: JSON.stringify(i),
    at: at(i),
  }));
  for (let i = 0; i < rows.length; i += 500)
    await server.database.db
      .insertInto("deviceStateHistory")
      .values(rows.slice(i, i + 500))
      .execute();
  // As the real write path does: every history value's entity has a latest value.
  const last = rows.at(-1);
  if (last)
    await server.database.db
      .insertInto("deviceState")
      .values({ deviceId, entityId, value: last.value, updatedAt: last.at })
      .onConflict((oc) => oc.columns(["deviceId", "entityId"]).doNothing())
      .execute();
}

async function logsOf(server: Server, deviceId: string) {
  return server.database.db
    .selectFrom("deviceLogs")
    .select(["id", "at", "message"])
    .where("deviceId", "=", deviceId)
    .orderBy("id")
    .execute();
}

async function historyOf(server: Server, deviceId: string, entityId: string) {
  return server.database.db
    .selectFrom("deviceStateHistory")
    .select(["id", "at"])
    .where("deviceId", "=", deviceId)
    .where("entityId", "=", entityId)
    .orderBy("id")
    .execute();
}

async function projectWithDevice(
  client: Awaited<ReturnType<Awaited<ReturnType<typeof startTestServer>>["user"]>>["client"],
  name: string,
) {
  const project = await client.api.createProject({ body: { name } });
  const device = await client.api.createDevice({
    params: { projectId: project.id },
    body: { name: `${name} board`, board: "pico_w" },
  });
  return { projectId: project.id, deviceId: device.device.id };
}

test("retention settings: defaults, partial changes, validation, and 404 for another user", async (t) => {
  const { user, server } = await startTestServer(t, { env: { DEVICE_LOG_MAX_ENTRIES: "2000" } });
  const owner = await user();
  const other = await user();
  const project = await owner.client.api.createProject({ body: { name: "Greenhouse" } });
  const params = { projectId: project.id };

  const defaults = await owner.client.api.getRetention({ params });
  assert.deepEqual(defaults, {
    logMaxEntries: 2000,
    logMaxAgeDays: 7,
    stateHistoryMaxEntries: 500,
    stateHistoryMaxAgeDays: 30,
    custom: false,
    updatedAt: null,
    serverLimits: { logMaxEntries: 2000, stateHistoryMaxEntries: 500 },
  });

  const changed = await owner.client.api.setRetention({
    params,
    body: { logMaxEntries: 50, stateHistoryMaxAgeDays: 2 },
  });
  assert.equal(changed.logMaxEntries, 50);
  assert.equal(changed.logMaxAgeDays, 7);
  assert.equal(changed.stateHistoryMaxAgeDays, 2);
  assert.equal(changed.custom, true);
  assert.equal(typeof changed.updatedAt, "string");
  assert.deepEqual(await owner.client.api.getRetention({ params }), changed);

  for (const body of [
    { logMaxEntries: 5 },
    { logMaxEntries: 2001 }, // above the server's DEVICE_LOG_MAX_ENTRIES
    { logMaxAgeDays: 0 },
    { logMaxAgeDays: 1.5 },
    { stateHistoryMaxEntries: 501 },
    { stateHistoryMaxAgeDays: 3651 },
    { logMaxAgeDays: "3" },
    { keepForever: true },
  ]) {
    const res = await raw(`${server.url}/v1/projects/${project.id}/retention`, {
      method: "PUT",
      headers: { authorization: `Bearer ${owner.auth.token!.token}` },
      json: body,
    });
    assert.equal(res.status, 400, JSON.stringify(body));
    assert.equal(res.body.error.code, "invalid_request", JSON.stringify(body));
  }
  assert.deepEqual(
    await owner.client.api.getRetention({ params }),
    changed,
    "nothing stored by a refused change",
  );

  await assert.rejects(other.client.api.getRetention({ params }), code("not_found"));
  await assert.rejects(
    other.client.api.setRetention({ params, body: { logMaxEntries: 10 } }),
    code("not_found"),
  );
  await assert.rejects(
    owner.client.api.getRetention({ params: { projectId: "prj_aaaaaaaaaaaaaaaaaaaa" } }),
    code("not_found"),
  );
  assert.equal((await owner.client.api.getRetention({ params })).logMaxEntries, 50);
});

test("the sweep prunes each project to its own rules, in batches, without holding up writes", async (t) => {
  const clock = new TestClock(Date.UTC(2026, 5, 1));
  const { user, server } = await startTestServer(t, {
    clock,
    env: { DEVICE_LOG_MAX_ENTRIES: "3000", STATE_HISTORY_MAX_ENTRIES: "2000", RETENTION_BATCH_ROWS: "100" },
  });
  const { client } = await user();
  const a = await projectWithDevice(client, "Strict");
  const b = await projectWithDevice(client, "Defaults");
  await client.api.setRetention({
    params: { projectId: a.projectId },
    body: { logMaxEntries: 20, logMaxAgeDays: 1, stateHistoryMaxEntries: 5, stateHistoryMaxAgeDays: 1 },
  });
  const now = clock.now();
  // 2,500 entries a minute apart going back ~42 hours, on both devices.
  const at = (i: number) => now - (2500 - i) * 60_000;
  await addLogs(server, a.deviceId, 2500, at);
  await addLogs(server, b.deviceId, 2500, at);
  await addHistory(server, a.deviceId, "temperature", 1000, (i) => now - (1000 - i) * 60_000);
  await addHistory(server, b.deviceId, "temperature", 1000, (i) => now - 30 * dayMs + (i - 500) * 60_000);

  const order: string[] = [];
  const sweep = server.services.retention.sweep().then(() => order.push("sweep"));
  // A device's log line issued after the sweep started, through the real write path (group
  // commit), is stored before the sweep ends.
  const write = server.services.deviceLogs
    .append({ projectId: b.projectId, deviceId: b.deviceId }, "info", "device", "during the sweep")
    .then(() => order.push("write"));
  await Promise.all([sweep, write]);
  assert.deepEqual(order, ["write", "sweep"]);

  const logsA = await logsOf(server, a.deviceId);
  assert.equal(logsA.length, 20, "project A keeps its 20 newest");
  assert.deepEqual(
    logsA.map((r) => r.at),
    Array.from({ length: 20 }, (_, k) => at(2480 + k)),
  );
  const logsB = await logsOf(server, b.deviceId);
  assert.equal(logsB.length, 2501, "project B (7 days, 3000 entries) loses nothing");
  const historyA = await historyOf(server, a.deviceId, "temperature");
  assert.equal(historyA.length, 5);
  // B's history straddles its 30 days, a minute apart: the 500 values older than that go.
  const historyB = await historyOf(server, b.deviceId, "temperature");
  assert.equal(historyB.length, 500);
  assert.ok(historyB.every((r) => r.at >= now - 30 * dayMs));

  // Age alone: a day later, with a rule of one day, only the one new entry of A survives.
  clock.advance(dayMs);
  await addLogs(server, a.deviceId, 1, () => clock.now());
  await server.services.retention.sweep();
  assert.equal((await logsOf(server, a.deviceId)).length, 1);
  assert.equal((await logsOf(server, b.deviceId)).length, 2501);
});

test("over DATABASE_MAX_MB the oldest logs and history go first, whatever their project, and the file shrinks", async (t) => {
  const clock = new TestClock(Date.UTC(2026, 5, 1));
  const { user, server, url } = await startTestServer(t, {
    clock,
    env: { DATABASE_MAX_MB: "1", DEVICE_LOG_MAX_ENTRIES: "100000", RETENTION_BATCH_ROWS: "500" },
  });
  const { client } = await user();
  const a = await projectWithDevice(client, "Old");
  const b = await projectWithDevice(client, "New");
  const now = clock.now();
  // ~5 MB of logs: A's are all older than B's.
  await addLogs(server, a.deviceId, 10_000, (i) => now - 2 * 3_600_000 + i);
  await addLogs(server, b.deviceId, 10_000, (i) => now - 3_600_000 + i);
  const before = (await raw(`${url}/ready`)).body.result;
  assert.ok(before.databaseBytes > 3 * 1048576, `${before.databaseBytes}`);
  assert.equal(before.databaseMaxBytes, 1048576);

  let runs = 0;
  while ((await server.services.retention.enforceCap()).overCap) assert.ok(++runs < 100);
  assert.equal(server.database.walBytes(), 0, "the write-ahead log is truncated once space went back");
  const after = (await raw(`${url}/ready`)).body.result;
  assert.ok(after.databaseBytes <= 1048576, `${after.databaseBytes}`);
  assert.equal(after.databaseFreeBytes, 0, "freed pages are given back to the filesystem");
  const left = [...(await logsOf(server, a.deviceId)), ...(await logsOf(server, b.deviceId))];
  assert.ok(left.length > 0 && left.length < 20_000);
  const newest = Math.max(...left.map((r) => r.at));
  assert.equal(newest, now - 3_600_000 + 9_999, "the newest entry stays");
  const oldestLeft = Math.min(...left.map((r) => r.at));
  const removedA = 10_000 - (await logsOf(server, a.deviceId)).length;
  assert.ok(removedA > 0);
  // Everything older than the oldest survivor is gone: nothing newer went before it.
  assert.equal(
    left.length,
    [...Array(10_000).keys()]
      .flatMap((i) => [now - 2 * 3_600_000 + i, now - 3_600_000 + i])
      .filter((x) => x >= oldestLeft).length,
  );
});

test("SQLite: new databases use incremental vacuum, and the file stops growing under steady writes", async (t) => {
  const clock = new TestClock(Date.UTC(2026, 5, 1));
  const { user, server, dataDir } = await startTestServer(t, {
    clock,
    env: { DEVICE_LOG_MAX_ENTRIES: "1000", RETENTION_BATCH_ROWS: "1000" },
  });
  const probe = new DatabaseSync(path.join(dataDir, "sdk.db"), { readOnly: true });
  t.after(() => probe.close());
  assert.equal((probe.prepare("PRAGMA auto_vacuum").get() as { auto_vacuum: number }).auto_vacuum, 2);

  const { client } = await user();
  const { deviceId } = await projectWithDevice(client, "Steady");
  const sizes: number[] = [];
  for (let round = 0; round < 4; round++) {
    const start = clock.now();
    await addLogs(server, deviceId, 5000, (i) => start + i);
    clock.advance(3_600_000);
    await server.services.retention.sweep();
    const status = await server.services.retention.diskStatus();
    assert.equal(status.databaseFreeBytes, 0, `round ${round}: no free pages left in the file`);
    sizes.push(status.databaseBytes);
    assert.equal((await logsOf(server, deviceId)).length, 1000);
  }
  // Round 0 already holds the steady state (1,000 entries): later rounds do not grow the file.
  const steady = sizes[0]!;
  for (const size of sizes.slice(1)) assert.ok(size <= steady * 1.1, `sizes ${sizes.join(", ")}`);
});

test("an existing small database without auto-vacuum is switched to incremental at start", async (t) => {
  const dataDir = tempDir(t);
  const old = new DatabaseSync(path.join(dataDir, "sdk.db"));
  old.exec("CREATE TABLE leftovers (x TEXT); INSERT INTO leftovers VALUES ('kept')");
  assert.equal((old.prepare("PRAGMA auto_vacuum").get() as { auto_vacuum: number }).auto_vacuum, 0);
  old.close();
  const { dataDir: dir } = await startTestServer(t, { dataDir });
  const probe = new DatabaseSync(path.join(dir, "sdk.db"), { readOnly: true });
  t.after(() => probe.close());
  assert.equal((probe.prepare("PRAGMA auto_vacuum").get() as { auto_vacuum: number }).auto_vacuum, 2);
  assert.deepEqual({ ...(probe.prepare("SELECT x FROM leftovers").get() as object) }, { x: "kept" });
});

test("/ready shows the database size and DATA_DIR's free space", async (t) => {
  const { url } = await startTestServer(t, { env: { DISK_LOW_MB: "0" } });
  const res = await raw(`${url}/ready`);
  assert.equal(res.status, 200);
  const result = res.body.result;
  assert.equal(result.status, "ready");
  assert.ok(Number.isInteger(result.databaseBytes) && result.databaseBytes > 0);
  assert.ok(Number.isInteger(result.databaseFreeBytes));
  assert.ok(Number.isInteger(result.dataDirFreeBytes) && result.dataDirFreeBytes > 0);
  assert.equal(result.diskLow, false);
  assert.equal(result.databaseMaxBytes, null);
});

function capturingLogger(t: TestContext) {
  const lines: { level: number; msg: string }[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split("\n").filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  t.after(() => stream.destroy());
  return { logger: pino({ level: "info" }, stream), lines };
}

async function until(condition: () => boolean, what: string) {
  for (let i = 0; i < 3000 && !condition(); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(condition(), what);
}

test("below DISK_LOW_MB the server warns once in its log and /ready says diskLow", async (t) => {
  const { logger, lines } = capturingLogger(t);
  // More free space than any test machine has: the disk counts as low at once.
  const { url, server } = await startTestServer(t, { logger, env: { DISK_LOW_MB: "1000000000" } });
  const warnings = () => lines.filter((l) => l.level === 40 && /Low disk space/.test(l.msg));
  await until(() => warnings().length === 1, "a low-space warning when the sweeper starts");
  assert.match(warnings()[0]!.msg, /DISK_LOW_MB=1000000000/);
  assert.equal(await server.services.retention.checkDisk(), undefined, "still low: said once per episode");
  assert.equal(await server.services.retention.checkDisk(), undefined);
  assert.equal(warnings().length, 1);
  const ready = (await raw(`${url}/ready`)).body;
  assert.equal(ready.success, true, "still ready: writes have not failed yet");
  assert.equal(ready.result.diskLow, true);
});

test("PostgreSQL: the same rules prune the same rows, and /ready shows the database size", async (t) => {
  const databaseUrl = await postgresUrl(t);
  if (!databaseUrl) return;
  const clock = new TestClock(Date.UTC(2026, 5, 1));
  const { user, server, url } = await startTestServer(t, {
    clock,
    env: { DATABASE_URL: databaseUrl, RETENTION_BATCH_ROWS: "50", DATABASE_MAX_MB: "1" },
  });
  const { client } = await user();
  const a = await projectWithDevice(client, "Strict");
  const b = await projectWithDevice(client, "Defaults");
  await client.api.setRetention({
    params: { projectId: a.projectId },
    body: { logMaxEntries: 10, stateHistoryMaxEntries: 3, stateHistoryMaxAgeDays: 1 },
  });
  const now = clock.now();
  await addLogs(server, a.deviceId, 300, (i) => now - (300 - i) * 1000);
  await addLogs(server, b.deviceId, 300, (i) => now - (300 - i) * 1000);
  await addHistory(server, a.deviceId, "t", 100, (i) => now - (100 - i) * 1000);
  await addHistory(server, b.deviceId, "t", 100, (i) => now - 2 * dayMs + i);
  await server.services.retention.sweep();
  assert.equal((await logsOf(server, a.deviceId)).length, 10);
  assert.equal((await logsOf(server, b.deviceId)).length, 300);
  assert.equal((await historyOf(server, a.deviceId, "t")).length, 3);
  assert.equal((await historyOf(server, b.deviceId, "t")).length, 100, "B keeps 30 days");
  const ready = (await raw(`${url}/ready`)).body.result;
  assert.equal(ready.database, "postgres");
  assert.ok(ready.databaseBytes > 0);
  assert.equal(ready.databaseMaxBytes, null, "the cap is SQLite's only");
});

test("the low-space warning does not flap: recovered only above DISK_LOW_MB plus 10 %", async (t) => {
  const { server, dataDir } = await startTestServer(t, { env: { DISK_LOW_MB: "0" } });
  let free = 200 * 1048576;
  const retention = retentionService({
    repos: { projects: projectsRepository(server.database.db) },
    retention: retentionRepository(server.database.db, "sqlite"),
    database: server.database,
    config: { ...server.config, dataDir, retention: { ...server.config.retention, diskLowMb: 100 } },
    clock: new TestClock(Date.UTC(2026, 5, 1)),
    freeBytes: async () => free,
  });
  const mb = (n: number) => n * 1048576;
  assert.equal(await retention.checkDisk(), undefined, "200 MB free: fine");
  free = mb(99);
  assert.equal((await retention.checkDisk())?.level, "warn");
  assert.equal((await retention.diskStatus()).diskLow, true);
  free = mb(101); // back over the threshold, not over it plus 10 %
  assert.equal(await retention.checkDisk(), undefined);
  assert.equal((await retention.diskStatus()).diskLow, true, "still low until 110 MB");
  free = mb(99);
  assert.equal(await retention.checkDisk(), undefined, "no second warning in the same episode");
  free = mb(111);
  const recovered = await retention.checkDisk();
  assert.equal(recovered?.level, "info");
  assert.match(recovered?.message ?? "", /Disk space recovered/);
  assert.equal((await retention.diskStatus()).diskLow, false);
  free = mb(105); // under 110 MB but over 100 MB: not low again
  assert.equal(await retention.checkDisk(), undefined);
  assert.equal((await retention.diskStatus()).diskLow, false);
});

test("/ready's 503 carries the disk figures in the error details", async (t) => {
  const { url, dataDir } = await startTestServer(t, { env: { DISK_LOW_MB: "1000000000" } });
  const other = new DatabaseSync(path.join(dataDir, "sdk.db"));
  t.after(() => other.close());
  other.exec("BEGIN EXCLUSIVE");
  const res = await raw(`${url}/ready`);
  other.exec("ROLLBACK");
  assert.equal(res.status, 503);
  assert.equal(res.body.error.code, "database_unavailable");
  const details = res.body.error.details;
  assert.ok(details.databaseBytes > 0, JSON.stringify(details));
  assert.equal(typeof details.databaseWalBytes, "number");
  assert.equal(details.diskLow, true);
  assert.ok(details.dataDirFreeBytes === null || details.dataDirFreeBytes > 0);
});

test("stopping the sweeper aborts a running sweep and waits for it to end", async () => {
  let sawAbort = false;
  let ended = false;
  let started!: () => void;
  const running = new Promise<void>((resolve) => {
    started = resolve;
  });
  const sweeper = new Sweeper(
    {
      retention: async (signal) => {
        started();
        await new Promise<void>((resolve) =>
          signal.addEventListener("abort", () => resolve(), { once: true }),
        );
        sawAbort = signal.aborted;
        await new Promise((resolve) => setImmediate(resolve)); // one more batch boundary
        ended = true;
      },
    },
    (error) => assert.fail(String(error)),
  );
  const sweep = sweeper.sweep();
  await running;
  await sweeper.stop();
  assert.ok(sawAbort && ended, "the sweep saw the abort and finished before stop() resolved");
  await sweep;
});
