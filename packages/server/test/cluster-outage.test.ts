// Two instances of one cluster (createServer twice) on a NATS server of this test's own, which the
// test stops and starts again: what happened through one instance during the outage reaches the
// other once NATS is back (docs/scaling.md, "When NATS is unreachable").
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { type TestContext, test } from "node:test";
import { deviceCloseCodes, watchCloseCodes } from "@sdk/protocol";
import { deployScript, waitUntil } from "@sdk/test-helpers";
import pino from "pino";
import { clusterEnvironment, startInstance } from "./helpers/cluster.ts";
import { freePort, logCollector, noNatsServer, ownNatsServer } from "./helpers/nats.ts";
import { postgresUrl } from "./helpers/postgres.ts";
import { simulatedBoard } from "./helpers/script-project.ts";
import { openSocket, wsUrl } from "./helpers/sockets.ts";

const bearer = (token: string | undefined) => ({ authorization: `Bearer ${token}` });

/** An instance whose log lines the test reads. */
async function instance(t: TestContext, env: Record<string, string>, id: string) {
  const log = logCollector();
  const logger = pino(
    { level: "info" },
    { write: (line: string) => log.log.info(String(JSON.parse(line).msg)) },
  );
  const server = await startInstance(t, env, id, { logger });
  return { ...server, log };
}

/**
 * Instances A and B of one cluster on a NATS server of the test's own (on `port`: `nats`, which
 * the test kills and starts again), or null (the test is skipped).
 */
async function twoInstancesOnOwnNats(t: TestContext) {
  const databaseUrl = await postgresUrl(t);
  if (!databaseUrl) return null;
  const port = await freePort();
  const nats = await ownNatsServer(t, port);
  const env = clusterEnvironment(t, {
    databaseUrl,
    natsUrl: `nats://127.0.0.1:${port}`,
    clusterName: `o${randomBytes(4).toString("hex")}`,
  });
  const a = await instance(t, env, "i-a");
  const b = await instance(t, env, "i-b");
  return { port, nats, a, b };
}

const script = (version: string) => `import { DeviceScript } from "@sdk/device";
export default class Greeter extends DeviceScript<{ GREETING: string }> {
  onMessage() { console.log("${version} greeting=" + this.env.GREETING); }
}`;

test("cluster: a NATS outage loses nothing: a revocation, an env change and a rollback made through A during it reach B once NATS is back; commands are refused at once meanwhile", {
  skip: noNatsServer,
}, async (t) => {
  const cluster = await twoInstancesOnOwnNats(t);
  if (!cluster) return;
  const { port, a, b } = cluster;
  let { nats } = cluster;

  // A project with a variable and two deployments (v2 live), made through A; its device on B.
  const { client, auth } = await a.user();
  const project = await client.api.createProject({ body: { name: "p" } });
  const projectId = project.id;
  await client.api.setEnvVar({ params: { projectId, name: "GREETING" }, body: { value: "hello" } });
  const v1 = await deployScript(t, client, projectId, script("v1"));
  const v2 = await deployScript(t, client, projectId, script("v2"));
  const { device, credentials } = await client.api.createDevice({
    params: { projectId },
    body: { name: "d", board: "pico_w" },
  });
  const ids = { projectId, deviceId: device.id };
  const sim = simulatedBoard(t, new URL(b.url).host, credentials).start();
  await sim.waitFor("connected");
  const running = () => b.server.services.scripts.runningDeployment(projectId);
  await waitUntil(() => running() === v2.id, 10_000, "v2 running on B");
  const logs = async () =>
    (await client.api.listDeviceLogs({ params: ids, query: { limit: 200 } })).map((l) => l.message);
  await client.api.sendDeviceMessage({ params: ids, body: { type: "say" } });
  await waitUntil(async () => (await logs()).includes("v2 greeting=hello"), 10_000, "v2 says hello");

  // Two watchers on B: one with a token that A will revoke, one with a token that stays valid.
  const doomed = await client.api.createToken({ body: { name: "doomed" } });
  const watchPath = `/v1/projects/${projectId}/devices/${device.id}/watch`;
  const revoked = await openSocket(t, wsUrl(b.url, watchPath), { headers: bearer(doomed.token) });
  const kept = await openSocket(t, wsUrl(b.url, watchPath), { headers: bearer(auth.token?.token) });
  await revoked.inbox.type("snapshot");
  await kept.inbox.type("snapshot");

  const ready = async (s: typeof a) =>
    ((await (await fetch(`${s.url}/ready`)).json()) as { result: { cluster?: unknown } }).result;
  assert.deepEqual((await ready(a)).cluster, { instanceId: "i-a", bus: "connected" });
  nats.kill("SIGKILL");
  await Promise.all([a, b].map((s) => s.log.line(/NATS: disconnected from 127\.0\.0\.1/)));
  // Still ready (it serves its own devices), and /ready says the bus is unreachable.
  assert.deepEqual((await ready(a)).cluster, { instanceId: "i-a", bus: "unreachable" });

  // A command through A for the device on B: refused at once, saying why.
  const started = performance.now();
  await assert.rejects(
    client.api.sendDeviceCommand({ params: ids, body: { type: "gpio_write", args: { pin: 3, value: 1 } } }),
    (e: any) => {
      assert.equal(e.code, "device_offline");
      assert.match(e.message, /the cluster's message bus \(NATS\) is unreachable/);
      return true;
    },
  );
  assert.ok(performance.now() - started < 2_000, "refused at once, not after the command timeout");

  // Through A during the outage: the variable changes, v1 goes live again, the token is revoked.
  await client.api.setEnvVar({ params: { projectId, name: "GREETING" }, body: { value: "bonjour" } });
  const again = await client.api.activateDeployment({ params: { projectId, deploymentId: v1.id } });
  assert.equal(again.status, "active");
  await client.api.revokeToken({ params: { tokenId: doomed.id } });
  assert.equal(running(), v2.id, "B has not heard of it yet");

  nats = await ownNatsServer(t, port);
  await Promise.all([a, b].map((s) => s.log.line(/NATS: reconnected to 127\.0\.0\.1/)));

  // The watcher of the revoked token is closed (by the revocation A kept for after the outage, or
  // by B's resync) and cannot come back; the other is told to reconnect and gets a fresh snapshot.
  const closedRevoked = await revoked.closed;
  assert.ok(
    [watchCloseCodes.revoked, deviceCloseCodes.serviceRestart].includes(closedRevoked.code as never),
    `closed with ${closedRevoked.code} ${closedRevoked.reason}`,
  );
  await assert.rejects(
    openSocket(t, wsUrl(b.url, watchPath), { headers: bearer(doomed.token) }),
    (e: any) => e.status === 401,
  );
  assert.deepEqual(await kept.closed, {
    code: 1012,
    reason: "server resynchronising; reconnect for a fresh snapshot",
  });
  const back = await openSocket(t, wsUrl(b.url, watchPath), { headers: bearer(auth.token?.token) });
  assert.equal((await back.inbox.type("snapshot")).device.status, "online");

  // B's scripts run v1 again, with the new value; commands through A reach the device again.
  await waitUntil(() => running() === v1.id, 10_000, "v1 running on B again");
  await client.api.sendDeviceMessage({ params: ids, body: { type: "say" } });
  await waitUntil(async () => (await logs()).includes("v1 greeting=bonjour"), 10_000, "v1 says bonjour");
  await client.api.sendDeviceCommand({
    params: ids,
    body: { type: "gpio_write", args: { pin: 3, value: 1 } },
  });
  assert.equal(sim.pin(3).output, 1);
  await b.log.line(/cluster: resync done \(\d+ watch stream\(s\) closed to reconnect\)/);
});

test("cluster: a device deleted and another's secret rotated during a NATS outage are disconnected from B once NATS is back", {
  skip: noNatsServer,
}, async (t) => {
  const cluster = await twoInstancesOnOwnNats(t);
  if (!cluster) return;
  const { port, a, b } = cluster;
  let { nats } = cluster;
  const { client } = await a.user();
  const project = await client.api.createProject({ body: { name: "p" } });
  const board = async (name: string) => {
    const { device, credentials } = await client.api.createDevice({
      params: { projectId: project.id },
      body: { name, board: "pico_w" },
    });
    const sim = simulatedBoard(t, new URL(b.url).host, credentials).start();
    await sim.waitFor("connected");
    return { ids: { projectId: project.id, deviceId: device.id }, sim };
  };
  const deleted = await board("deleted");
  const rotated = await board("rotated");
  const untouched = await board("untouched");
  const closes = new Map<string, { code: number; reason: string }>();
  for (const [name, d] of Object.entries({ deleted, rotated, untouched }))
    d.sim.on("disconnected", (e: { code: number; reason: string }) => closes.set(name, e));

  nats.kill("SIGKILL");
  await Promise.all([a, b].map((s) => s.log.line(/NATS: disconnected from 127\.0\.0\.1/)));
  await client.api.deleteDevice({ params: deleted.ids });
  await client.api.rotateDeviceCredentials({ params: rotated.ids });
  nats = await ownNatsServer(t, port);
  await waitUntil(() => closes.size === 2, 10_000, "both closed");
  assert.deepEqual(closes.get("deleted"), { code: deviceCloseCodes.revoked, reason: "device deleted" });
  assert.deepEqual(closes.get("rotated"), { code: deviceCloseCodes.revoked, reason: "credentials rotated" });
  await b.log.line(/cluster: resync done/);
  assert.equal(untouched.sim.connected, true, "the device nothing happened to stays connected");
});
