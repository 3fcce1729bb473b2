// Three real server processes, one cluster (docs/scaling.md): one PostgreSQL schema, one NATS, a
// cluster name of their own, one key file. Clients reach them as behind the proxy of
// deploy/compose.cluster.yaml: the device through a TCP forwarder that picks a live instance, REST
// and watchers each on the instance the test names. What users see must be what one server shows.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { type TestContext, test } from "node:test";
import { SdkClient } from "@sdk/client";
import { SimulatedDevice } from "@sdk/simulator";
import {
  boundedFetch,
  deployScript,
  freePort,
  type ServerProcess,
  serverEnv,
  spawnServer,
  tempDir,
  waitForHealth,
  within,
} from "@sdk/test-helpers";
import { natsCluster } from "./helpers/nats.ts";
import { postgresUrl } from "./helpers/postgres.ts";
import { basic, hello, type Inbox, openSocket, wsUrl } from "./helpers/sockets.ts";

const leaseSeconds = 2;
const password = "correct horse battery";

/**
 * A TCP forwarder standing in for the proxy in front of a cluster: each connection goes to the
 * first instance of `targets` that accepts it. With no target, connections are refused (closed at
 * once), as a proxy with no live instance does.
 */
async function forwarder(t: TestContext) {
  const state = { targets: [] as number[] };
  const sockets = new Set<net.Socket>();
  const dial = (client: net.Socket, ports: number[]) => {
    const [port, ...rest] = ports;
    if (port === undefined) return client.destroy();
    const upstream = net.connect({ host: "127.0.0.1", port });
    sockets.add(upstream);
    upstream.once("close", () => sockets.delete(upstream));
    let connected = false;
    upstream.on("error", () => {
      // Refused: the next instance; after connecting, the client's connection ends with it.
      if (!connected) dial(client, rest);
    });
    upstream.once("connect", () => {
      connected = true;
      client.on("error", () => upstream.destroy());
      client.pipe(upstream).pipe(client);
      client.on("close", () => upstream.destroy());
      upstream.on("close", () => client.destroy());
    });
  };
  const server = net.createServer((client) => {
    sockets.add(client);
    client.once("close", () => sockets.delete(client));
    dial(client, [...state.targets]);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const { port } = server.address() as net.AddressInfo;
  return { host: `127.0.0.1:${port}`, state };
}

/** Spawns one instance of the cluster and waits until it answers /health. */
async function instance(t: TestContext, id: string, env: Record<string, string>): Promise<ServerProcess> {
  const port = await freePort();
  const dataDir = tempDir(t, `sdk-cluster-${id}-`);
  const proc = spawnServer(t, {
    env: serverEnv(port, dataDir, { ...env, INSTANCE_ID: id }),
    port,
    dataDir,
  });
  await waitForHealth(proc, 600);
  return proc;
}

/** The cluster: A first (it migrates the schema), then B and C; a user with a project and a device. */
async function cluster(t: TestContext) {
  const databaseUrl = await postgresUrl(t);
  if (!databaseUrl) return null;
  const nats = await natsCluster(t);
  if (!nats) return null;
  const keyFile = path.join(tempDir(t, "sdk-cluster-key-"), "secret.key");
  fs.writeFileSync(keyFile, randomBytes(32).toString("base64"), { mode: 0o600 });
  const env = {
    DATABASE_URL: databaseUrl,
    NATS_URL: nats.natsUrl,
    CLUSTER_NAME: nats.clusterName,
    CLUSTER_LEASE_SECONDS: String(leaseSeconds),
    SECRET_KEY_FILE: keyFile,
    TRUST_PROXY: "true",
    RATE_LIMIT_MAX_ATTEMPTS: "3",
    RATE_LIMIT_WINDOW_SECONDS: "600",
    HEARTBEAT_SECONDS: "5",
  };
  const a = await instance(t, "a", env);
  const [b, c] = await Promise.all([instance(t, "b", env), instance(t, "c", env)]);
  const client = (proc: ServerProcess, token?: string) =>
    new SdkClient({ baseUrl: proc.url, token, fetch: boundedFetch(15_000) });
  const auth = await client(a).api.register({
    body: { email: "owner@example.com", password, issueToken: true },
  });
  const token = auth.token!.token;
  const project = await client(b, token).api.createProject({ body: { name: "p" } });
  const { device, credentials } = await client(c, token).api.createDevice({
    params: { projectId: project.id },
    body: { name: "d", board: "pico_w" },
  });
  const ids = { projectId: project.id, deviceId: device.id };
  return { a, b, c, client, token, project, device, credentials, ids };
}
type Cluster = NonNullable<Awaited<ReturnType<typeof cluster>>>;

/** A watch socket for the device on `proc`; `after` returns the events since the mark. */
async function watcher(t: TestContext, s: Cluster, proc: ServerProcess, token = s.token) {
  const path = `/v1/projects/${s.ids.projectId}/devices/${s.ids.deviceId}/watch`;
  const socket = await openSocket(t, wsUrl(proc.url, path), {
    headers: { authorization: `Bearer ${token}` },
  });
  await socket.inbox.type("snapshot");
  return socket;
}

/** The first event after `fromSeq` that matches. */
const nextAfter = (
  inbox: Inbox,
  fromSeq: number,
  match: (m: any) => boolean,
  timeoutMs: number,
  what: string,
) => inbox.next((m) => m.seq > fromSeq && match(m), timeoutMs, what);
const lastSeq = (inbox: Inbox) => inbox.messages.at(-1)?.seq ?? 0;

/** A script that says which version runs each time its device connects, and echoes messages. */
const versionScript = (version: string) => `import { DeviceScript } from "@sdk/device";
export default class S extends DeviceScript {
  onDeviceConnect() { this.env.DEVICE.emitState("version", "${version} " + Math.random()); }
  onMessage(msg) { if (msg.type === "echo") this.env.DEVICE.emitState("echo", msg.n); }
}`;
const isVersion = (version: string) => (m: any) =>
  m.type === "state" && m.entityId === "version" && String(m.value).startsWith(`${version} `);

test("three instances: a device on A, a watcher on B, commands from C; A killed, the device goes on through B", async (t) => {
  const s = await cluster(t);
  if (!s) return;
  const proxy = await forwarder(t);
  proxy.state.targets = [s.a.port];
  const fromC = s.client(s.c, s.token);

  // A deployment made through C is live before the board connects: it will run on A.
  const v1 = await deployScript(t, fromC, s.ids.projectId, versionScript("v1"));
  assert.equal(v1.status, "active");

  const onB = await watcher(t, s, s.b);
  const sim = new SimulatedDevice({
    server: proxy.host,
    deviceId: s.credentials.deviceId,
    secret: s.credentials.secret,
    // A dead instance is noticed at once (the forwarder drops the socket); retry quickly.
    reconnect: { baseMs: 100, capMs: 500 },
  });
  t.after(() => sim.stop());
  sim.start();
  await sim.waitFor("connected");

  await onB.inbox.next((m) => m.type === "status" && m.status === "online", 15_000, "online, seen on B");
  await onB.inbox.next(isVersion("v1"), 15_000, "v1's onDeviceConnect on A, seen on B");
  const device = await s.client(s.c, s.token).api.getDevice({ params: s.ids });
  assert.equal(device.status, "online", "C reads the device as online");

  // A command sent to C reaches the board on A, and its answer comes back.
  const answer = await fromC.api.sendDeviceCommand({
    params: s.ids,
    body: { type: "gpio_write", args: { pin: 2, value: 1 } },
  });
  assert.ok("value" in answer);
  assert.equal(sim.pin(2).output, 1, "the board drove the pin");
  assert.equal(sim.commandsOf("gpio_write").length, 1, "one command, run once");
  // A message sent to C reaches the script on A; what it emits reaches the watcher on B.
  const mark = lastSeq(onB.inbox);
  assert.deepEqual(await fromC.api.sendDeviceMessage({ params: s.ids, body: { type: "echo", n: 42 } }), {
    delivered: true,
  });
  await nextAfter(
    onB.inbox,
    mark,
    (m) => m.type === "state" && m.entityId === "echo" && m.value === 42,
    15_000,
    "the echo",
  );

  // kill -9 A while the proxy has nowhere to send the board: the lease, not the board, says offline.
  proxy.state.targets = [];
  const killedAt = performance.now();
  const beforeKill = lastSeq(onB.inbox);
  await s.a.stop("SIGKILL");
  const offline = await nextAfter(
    onB.inbox,
    beforeKill,
    (m) => m.type === "status" && m.status === "offline",
    3 * leaseSeconds * 1000 + 10_000,
    "offline after A's lease ran out",
  );
  const tookMs = performance.now() - killedAt;
  t.diagnostic(`offline on B ${Math.round(tookMs)} ms after kill -9 A (lease ${leaseSeconds} s)`);
  // The lease runs out at most `leaseSeconds` after A's last renewal; the others check every third
  // of it. Two leases and 3 s of slack for a loaded machine.
  assert.ok(
    tookMs < 2 * leaseSeconds * 1000 + 3_000,
    `offline within the lease and its check (${Math.round(tookMs)} ms)`,
  );
  const offlineRead = await fromC.api.getDevice({ params: s.ids });
  assert.equal(offlineRead.status, "offline", "C reads it offline too");

  // The board finds B through the proxy: online again, its script running there.
  proxy.state.targets = [s.b.port, s.c.port];
  await nextAfter(
    onB.inbox,
    offline.seq,
    (m) => m.type === "status" && m.status === "online",
    30_000,
    "online again",
  );
  await nextAfter(onB.inbox, offline.seq, isVersion("v1"), 15_000, "v1's onDeviceConnect on B");
  assert.equal((await fromC.api.getDevice({ params: s.ids })).status, "online");
  const commandsBefore = sim.commandsOf("gpio_write").length;
  await fromC.api.sendDeviceCommand({
    params: s.ids,
    body: { type: "gpio_write", args: { pin: 3, value: 1 } },
  });
  assert.equal(sim.pin(3).output, 1, "a command from C reaches the board on B");
  assert.equal(sim.commandsOf("gpio_write").length, commandsBefore + 1);

  // A new deployment through C goes live on B (the device's instance), then the first one again.
  let from = lastSeq(onB.inbox);
  const v2 = await deployScript(t, fromC, s.ids.projectId, versionScript("v2"));
  assert.equal(v2.status, "active");
  await nextAfter(onB.inbox, from, isVersion("v2"), 15_000, "v2 running for the device on B");
  from = lastSeq(onB.inbox);
  const again = await fromC.api.activateDeployment({ params: { ...s.ids, deploymentId: v1.id } });
  assert.equal(again.status, "active");
  await nextAfter(onB.inbox, from, isVersion("v1"), 15_000, "v1 running again for the device on B");
  from = lastSeq(onB.inbox);
  await fromC.api.sendDeviceMessage({ params: s.ids, body: { type: "echo", n: 7 } });
  await nextAfter(
    onB.inbox,
    from,
    (m) => m.type === "state" && m.entityId === "echo" && m.value === 7,
    15_000,
    "the echo from B's script",
  );
});

test("three instances: a token revoked through B closes its watch socket on C; the sign-in limit is one for all", async (t) => {
  const s = await cluster(t);
  if (!s) return;
  const created = await s.client(s.a, s.token).api.createToken({ body: { name: "ha" } });
  const onC = await watcher(t, s, s.c, created.token);
  const other = await watcher(t, s, s.c);
  await s.client(s.b, s.token).api.revokeToken({ params: { tokenId: created.id } });
  const closed = await within(onC.closed, 15_000, "the revoked token's watch socket on C closing");
  assert.equal(closed.code, 4001);
  assert.equal(other.ws.readyState, other.ws.OPEN, "the owner's other credentials keep their stream");
  await assert.rejects(
    s.client(s.a, created.token).api.whoami(),
    (e: any) => e.status === 401,
    "the revoked token is refused on A too",
  );

  // Failed sign-ins for one account, from three addresses, spread over the three instances.
  const login = (proc: ServerProcess, pw: string, address: string) =>
    fetch(`${proc.url}/v1/auth/login`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-forwarded-for": address },
      body: JSON.stringify({ email: "owner@example.com", password: pw }),
      signal: AbortSignal.timeout(15_000),
    });
  for (const [i, proc] of [s.a, s.b, s.c].entries())
    assert.equal((await login(proc, "wrong password", `10.0.0.${i + 1}`)).status, 401);
  for (const proc of [s.a, s.b, s.c]) {
    const limited = await login(proc, password, "10.0.1.1");
    assert.equal(limited.status, 429, "the account's limit holds on every instance");
    assert.ok(Number(limited.headers.get("retry-after")) >= 1);
  }
});

test("three instances: the same board connecting to C replaces its connection on A (4000), online throughout", async (t) => {
  const s = await cluster(t);
  if (!s) return;
  const onB = await watcher(t, s, s.b);
  const device = (proc: ServerProcess) =>
    openSocket(t, wsUrl(proc.url, "/v1/device"), {
      headers: basic(s.credentials.deviceId, s.credentials.secret),
    });
  const onA = await device(s.a);
  onA.send(hello());
  await onA.inbox.type("welcome");
  await onB.inbox.next((m) => m.type === "status" && m.status === "online", 15_000, "online on A, seen on B");
  const mark = lastSeq(onB.inbox);

  const onC = await device(s.c);
  onC.send(hello());
  await onC.inbox.type("welcome");
  const closed = await within(onA.closed, 15_000, "A letting go of the board");
  assert.equal(closed.code, 4000, "replaced");

  // A command from B goes to the connection on C, the board's owner now.
  onC.ws.on("message", (data) => {
    const m = JSON.parse(data.toString());
    if (m.type === "gpio_read") onC.send({ type: "result", id: m.id, value: { value: 1 } });
  });
  const answer = await s
    .client(s.b, s.token)
    .api.sendDeviceCommand({ params: s.ids, body: { type: "gpio_read", args: { pin: 2 } } });
  assert.deepEqual(answer, { value: { value: 1 } });
  assert.equal((await s.client(s.a, s.token).api.getDevice({ params: s.ids })).status, "online");
  const offline = onB.inbox.messages.filter(
    (m) => m.seq > mark && m.type === "status" && m.status === "offline",
  );
  assert.deepEqual(offline, [], "the watcher on B never saw it offline");
});
