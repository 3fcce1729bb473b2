// Two instances of one cluster in this process: createServer twice on one PostgreSQL schema and
// one NATS (a cluster name of their own), each with its own INSTANCE_ID and DATA_DIR, one key file.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { deviceCloseCodes } from "@sdk/protocol";
import { waitUntil } from "@sdk/test-helpers";
import { clusterEnv, startInstance as instance } from "./helpers/cluster.ts";
import { simulatedBoard } from "./helpers/script-project.ts";
import { createTestServer, type TestServer, tempDir } from "./helpers/server.ts";
import { basic, hello, openSocket, wsUrl } from "./helpers/sockets.ts";

const bearer = (token: string | undefined) => ({ authorization: `Bearer ${token}` });

/** A user (signed up through `a`), a project and a device; the token works on every instance. */
async function deviceOf(a: TestServer) {
  const { client } = await a.user();
  const project = await client.api.createProject({ body: { name: "p" } });
  const { device, credentials } = await client.api.createDevice({
    params: { projectId: project.id },
    body: { name: "d", board: "pico_w" },
  });
  const ids = { projectId: project.id, deviceId: device.id };
  return {
    token: client.token,
    ids,
    credentials,
    watchPath: `/v1/projects/${project.id}/devices/${device.id}/watch`,
  };
}

test("cluster: a device on A, a watcher on B: its events in order, commands from B, a reconnect to B takes it over", async (t) => {
  const env = await clusterEnv(t);
  if (!env) return;
  const a = await instance(t, env, "i-a");
  const b = await instance(t, env, "i-b");
  const { token, ids, credentials, watchPath } = await deviceOf(a);

  // A watcher on B, and one on A for comparison.
  const watch = await openSocket(t, wsUrl(b.url, watchPath), { headers: bearer(token) });
  const local = await openSocket(t, wsUrl(a.url, watchPath), { headers: bearer(token) });
  assert.equal((await watch.inbox.type("snapshot")).device.status, "offline");
  await local.inbox.type("snapshot");
  const sim = simulatedBoard(t, new URL(a.url).host, credentials).start();
  await sim.waitFor("connected");
  await watch.inbox.next((m) => m.type === "status" && m.status === "online");
  for (let n = 1; n <= 20; n++) {
    sim.sendLog("info", `line ${n}`);
    sim.sendState("count", n);
  }
  const last = (m: any) => m.type === "state" && m.value === 20;
  await watch.inbox.next(last);
  await local.inbox.next(last);
  const upTo = (messages: any[]) => messages.slice(1, messages.findIndex(last) + 1);
  assert.deepEqual(
    upTo(watch.inbox.messages),
    upTo(local.inbox.messages),
    "B's watcher hears what A's hears: the same events, in the same order, with the same seq",
  );
  const values = (type: string) =>
    watch.inbox.messages
      .filter((m) => m.type === type && (type !== "log" || m.entry.source === "device"))
      .map((m) => (type === "log" ? m.entry.message : m.value));
  assert.deepEqual(
    values("log"),
    Array.from({ length: 20 }, (_, i) => `line ${i + 1}`),
  );
  assert.deepEqual(
    values("state"),
    Array.from({ length: 20 }, (_, i) => i + 1),
  );
  const seqs = watch.inbox.messages.map((m) => m.seq);
  assert.deepEqual(
    seqs,
    seqs.map((_, i) => i + 1),
    "seq counts up from 1 without gaps",
  );

  // A command through B runs on A, where the device is; the answer and the errors come back.
  const viaB = b.client(token);
  assert.equal((await viaB.api.getDevice({ params: ids })).status, "online");
  const written = await viaB.api.sendDeviceCommand({
    params: ids,
    body: { type: "gpio_write", args: { pin: 2, value: 1 } },
  });
  assert.deepEqual(written, { value: null });
  assert.equal(sim.pin(2).level, 1, "the board on A did it");

  // The board reconnects to B: A lets its socket go with 4000, the device stays online.
  const disconnected = sim.waitFor("disconnected");
  const onB = await openSocket(t, wsUrl(b.url, "/v1/device"), {
    headers: basic(credentials.deviceId, credentials.secret),
  });
  onB.send(hello());
  await onB.inbox.type("welcome");
  assert.equal((await disconnected).code, deviceCloseCodes.replaced);
  await waitUntil(
    async () =>
      (await viaB.api.listDeviceLogs({ params: ids, query: { limit: 50 } })).some((l) =>
        /another server instance/.test(l.message),
      ),
    10_000,
    "A's log line for the takeover",
  );
  assert.equal((await viaB.api.getDevice({ params: ids })).status, "online");
  assert.equal(
    watch.inbox.messages.filter((m) => m.type === "status" && m.status === "offline").length,
    0,
    "no offline on the way",
  );
  // Commands through A now reach B's connection.
  const viaA = a.client(token);
  const command = viaA.api.sendDeviceCommand({ params: ids, body: { type: "gpio_read", args: { pin: 3 } } });
  const frame = await onB.inbox.next((m) => m.type === "gpio_read");
  onB.send({ type: "result", id: frame.id, value: { value: 0 } });
  assert.deepEqual(await command, { value: { value: 0 } });
  // The device's error on B reaches the caller on A with its code and message.
  const failing = viaA.api.sendDeviceCommand({
    params: ids,
    body: { type: "i2c_read", args: { bus: 0, address: 64, length: 2 } },
  });
  const i2c = await onB.inbox.next((m) => m.type === "i2c_read");
  onB.send({ type: "error", id: i2c.id, code: "i2c_nack", message: "no device at 0x40" });
  await assert.rejects(
    failing,
    (e: any) =>
      e.status === 502 && e.code === "device_error" && e.message === "i2c_read: i2c_nack: no device at 0x40",
  );
});

test("cluster: an instance that stops renewing its lease is dead: its devices go offline once, watchers on the others hear it", async (t) => {
  const env = await clusterEnv(t, { CLUSTER_LEASE_SECONDS: "2" });
  if (!env) return;
  const a = await instance(t, env, "i-a");
  const { token, ids, credentials, watchPath } = await deviceOf(a);
  const sim = simulatedBoard(t, new URL(a.url).host, credentials).start();
  await sim.waitFor("connected");
  // B boots while A serves the device: it stays online (one process would mark every device offline).
  const b = await instance(t, env, "i-b");
  const viaB = b.client(token);
  assert.equal((await viaB.api.getDevice({ params: ids })).status, "online");
  const watch = await openSocket(t, wsUrl(b.url, watchPath), { headers: bearer(token) });
  assert.equal((await watch.inbox.type("snapshot")).device.status, "online");

  // A "dies": no more renewals, no more NATS (its sockets stay open, as a frozen process's would).
  await a.server.cluster?.lease.halt();
  await a.server.cluster?.close();
  const offline = await watch.inbox.next((m) => m.type === "status" && m.status === "offline", 15_000);
  assert.ok(offline.reason);
  assert.equal((await viaB.api.getDevice({ params: ids })).status, "offline");
  const logs = (await viaB.api.listDeviceLogs({ params: ids, query: { limit: 50 } })).map((l) => l.message);
  assert.equal(
    logs.filter((m) => /server instance i-a stopped answering/.test(m)).length,
    1,
    logs.join("\n"),
  );
  // A command through B for the device: no instance serves it.
  await assert.rejects(
    viaB.api.sendDeviceCommand({ params: ids, body: { type: "gpio_read", args: { pin: 3 } } }),
    (e: any) => e.status === 409 && e.code === "device_offline",
  );
});

test("cluster: startup refuses an unreachable NATS, a missing key file (never making one) and the INSTANCE_ID of a live instance", async (t) => {
  const env = await clusterEnv(t);
  if (!env) return;
  await assert.rejects(
    createTestServer(t, { env: { ...env, NATS_URL: "nats://user:hunter2@127.0.0.1:1" } }),
    (e: Error) =>
      /cannot connect to NATS at 127\.0\.0\.1:1 \(NATS_URL\)/.test(e.message) && !/hunter2/.test(e.message),
  );
  const dataDir = tempDir(t);
  await assert.rejects(
    createTestServer(t, { dataDir, env: { ...env, SECRET_KEY_FILE: "" } }),
    (e: Error) =>
      e.message.includes(path.join(dataDir, "secret.key")) &&
      /every instance of a cluster needs the same secret key file/.test(e.message) &&
      e.message.includes("head -c 32 /dev/urandom | base64 > secret.key"),
  );
  assert.equal(fs.existsSync(path.join(dataDir, "secret.key")), false, "no key was made");
  // The data directory was let go: a server with the right settings starts on it.
  const server = await createTestServer(t, { dataDir, env });
  assert.equal(server.cluster?.instanceId.startsWith("i-"), true);
  // A second instance with the id of a live one: refused, saying why.
  await assert.rejects(
    createTestServer(t, { env: { ...env, INSTANCE_ID: server.cluster?.instanceId as string } }),
    (e: Error) =>
      e.message.startsWith(
        `another live instance of cluster ${env.CLUSTER_NAME} has INSTANCE_ID ${server.cluster?.instanceId}`,
      ),
  );
});

test("cluster: a clean stop removes the instance's lease row and takes its devices offline (watchers on the others hear it); the others carry on", async (t) => {
  const env = await clusterEnv(t);
  if (!env) return;
  const a = await instance(t, env, "i-a");
  const b = await instance(t, env, "i-b");
  const { token, ids, credentials, watchPath } = await deviceOf(a);
  const watch = await openSocket(t, wsUrl(b.url, watchPath), { headers: bearer(token) });
  await watch.inbox.type("snapshot");
  const sim = simulatedBoard(t, new URL(a.url).host, credentials).start();
  await sim.waitFor("connected");
  await watch.inbox.next((m) => m.type === "status" && m.status === "online");
  const instances = async () =>
    (await b.server.database.db.selectFrom("instances").select("id").orderBy("id").execute()).map(
      (r) => r.id,
    );
  assert.deepEqual(await instances(), ["i-a", "i-b"]);
  const disconnected = sim.waitFor("disconnected");
  await a.server.close();
  assert.equal((await disconnected).code, 1001, "going away");
  assert.deepEqual(await instances(), ["i-b"]);
  await watch.inbox.next((m) => m.type === "status" && m.status === "offline");
  const viaB = b.client(token);
  assert.equal((await viaB.api.getDevice({ params: ids })).status, "offline");
  // The board comes back through B.
  const again = simulatedBoard(t, new URL(b.url).host, credentials).start();
  await again.waitFor("connected");
  assert.equal((await viaB.api.getDevice({ params: ids })).status, "online");
  assert.deepEqual(
    await viaB.api.sendDeviceCommand({
      params: ids,
      body: { type: "gpio_write", args: { pin: 2, value: 1 } },
    }),
    { value: null },
  );
});

test("cluster: the newest connection wins whatever order the hellos come in: an older one's late hello neither kicks the board off nor keeps it online", async (t) => {
  const env = await clusterEnv(t);
  if (!env) return;
  const a = await instance(t, env, "i-a");
  const b = await instance(t, env, "i-b");
  const { token, ids, credentials, watchPath } = await deviceOf(a);
  const watch = await openSocket(t, wsUrl(a.url, watchPath), { headers: bearer(token) });
  await watch.inbox.type("snapshot");
  const auth = { headers: basic(credentials.deviceId, credentials.secret) };
  // The board connects to A, its hello is slow; it gives up and connects to B, which serves it.
  const older = await openSocket(t, wsUrl(a.url, "/v1/device"), auth);
  const newer = await openSocket(t, wsUrl(b.url, "/v1/device"), auth);
  newer.send(hello());
  await newer.inbox.type("welcome");
  await watch.inbox.next((m) => m.type === "status" && m.status === "online");
  // The older connection's hello arrives now: it is closed as replaced; B keeps the board.
  older.send(hello());
  assert.equal((await older.closed).code, deviceCloseCodes.replaced);
  assert.equal(older.inbox.messages.filter((m) => m.type === "welcome").length, 0, "never welcomed");
  const viaA = a.client(token);
  const command = viaA.api.sendDeviceCommand({ params: ids, body: { type: "gpio_read", args: { pin: 3 } } });
  const frame = await newer.inbox.next((m) => m.type === "gpio_read");
  newer.send({ type: "result", id: frame.id, value: { value: 1 } });
  assert.deepEqual(await command, { value: { value: 1 } }, "served by B's connection");
  const row = await a.server.database.db
    .selectFrom("devices")
    .select(["status", "instanceId"])
    .where("id", "=", ids.deviceId)
    .executeTakeFirstOrThrow();
  assert.deepEqual(row, { status: "online", instanceId: "i-b" });
  // The board leaves B: it goes offline (nothing of A's stale connection keeps it online).
  newer.ws.close();
  await watch.inbox.next((m) => m.type === "status" && m.status === "offline");
  assert.equal((await viaA.api.getDevice({ params: ids })).status, "offline");
  assert.equal(
    watch.inbox.messages.filter((m) => m.type === "status").length,
    2,
    "online once, offline once",
  );
});

test("cluster: an instance taken for dead while it still served its boards takes them back: watchers elsewhere see them online again, commands reach them", async (t) => {
  const env = await clusterEnv(t, { CLUSTER_LEASE_SECONDS: "2" });
  if (!env) return;
  const a = await instance(t, env, "i-a");
  const b = await instance(t, env, "i-b");
  const { token, ids, credentials, watchPath } = await deviceOf(a);
  const watch = await openSocket(t, wsUrl(b.url, watchPath), { headers: bearer(token) });
  await watch.inbox.type("snapshot");
  const board = await openSocket(t, wsUrl(a.url, "/v1/device"), {
    headers: basic(credentials.deviceId, credentials.secret),
  });
  board.send(hello());
  await board.inbox.type("welcome");
  await watch.inbox.next((m) => m.type === "status" && m.status === "online");
  // A's renewals stall (a paused process, not a dead one): B takes it for dead.
  const lease = a.server.cluster!.lease;
  await lease.halt();
  await watch.inbox.next((m) => m.type === "status" && m.status === "offline", 15_000);
  // A renews again: the board, still connected to it, is online again and watchers hear it.
  await lease.renew();
  await watch.inbox.next((m) => m.type === "status" && m.status === "online");
  const viaB = b.client(token);
  assert.equal((await viaB.api.getDevice({ params: ids })).status, "online");
  const command = viaB.api.sendDeviceCommand({ params: ids, body: { type: "gpio_read", args: { pin: 3 } } });
  const frame = await board.inbox.next((m) => m.type === "gpio_read");
  board.send({ type: "result", id: frame.id, value: { value: 0 } });
  assert.deepEqual(await command, { value: { value: 0 } });
  const logs = (await viaB.api.listDeviceLogs({ params: ids, query: { limit: 50 } })).map((l) => l.message);
  assert.ok(
    logs.some((m) => /online again: this server instance was taken for dead/.test(m)),
    logs.join("\n"),
  );
});

test("cluster: two connections of a board on one instance, hellos back to back, the older first: the newer serves it and it is announced online", async (t) => {
  const env = await clusterEnv(t);
  if (!env) return;
  const a = await instance(t, env, "i-a");
  const { token, ids, credentials, watchPath } = await deviceOf(a);
  const watch = await openSocket(t, wsUrl(a.url, watchPath), { headers: bearer(token) });
  await watch.inbox.type("snapshot");
  const auth = { headers: basic(credentials.deviceId, credentials.secret) };
  const older = await openSocket(t, wsUrl(a.url, "/v1/device"), auth);
  const newer = await openSocket(t, wsUrl(a.url, "/v1/device"), auth);
  older.send(hello());
  newer.send(hello());
  await newer.inbox.type("welcome");
  assert.equal((await older.closed).code, deviceCloseCodes.replaced);
  await watch.inbox.next((m) => m.type === "status" && m.status === "online");
  assert.equal((await a.client(token).api.getDevice({ params: ids })).status, "online");
  newer.ws.close();
  await watch.inbox.next((m) => m.type === "status" && m.status === "offline");
});
