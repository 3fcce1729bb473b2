// Two instances of a cluster in this process (one NATS, one PostgreSQL database): the state
// that was per process is shared. The sign-in rate limit holds across instances, a firmware
// release uploaded through one downloads through the other, canaries are refused, and watch
// sockets on one instance close for revocations and deletions made through the other.
import assert from "node:assert/strict";
import { type TestContext, test } from "node:test";
import { fakeReleaseUf2, waitUntil } from "@sdk/test-helpers";
import { clusterEnv, startInstance } from "./helpers/cluster.ts";
import { simulatedBoard } from "./helpers/script-project.ts";
import { raw } from "./helpers/server.ts";
import { openSocket, wsUrl } from "./helpers/sockets.ts";

const password = "correct horse battery";

async function twoInstances(t: TestContext) {
  const env = await clusterEnv(t, { RATE_LIMIT_MAX_ATTEMPTS: "3", RATE_LIMIT_WINDOW_SECONDS: "60" });
  if (!env) return null;
  const a = await startInstance(t, env, "a");
  const b = await startInstance(t, env, "b");
  return { a, b };
}

test("two instances: one sign-in rate limit, firmware uploaded through A downloads through B", {
  timeout: 30_000,
}, async (t) => {
  const s = await twoInstances(t);
  if (!s) return;
  const { a, b } = s;
  const { client: admin } = await a.user("admin@example.com", password);
  const login = (url: string, pw: string) =>
    raw(`${url}/v1/auth/login`, { method: "POST", json: { email: "admin@example.com", password: pw } });

  assert.equal((await login(a.url, "wrong password")).status, 401);
  assert.equal((await login(b.url, "wrong password")).status, 401);
  assert.equal((await login(a.url, "wrong password")).status, 401);
  for (const url of [b.url, a.url]) {
    const limited = await login(url, password);
    assert.equal(limited.status, 429, "three failures through two instances reach the limit");
    assert.ok(Number(limited.headers.get("retry-after")) >= 1);
  }

  const uf2 = fakeReleaseUf2({ board: "pico_w" });
  await admin.uploadFirmware({ version: "3.1.0", board: "pico_w", bytes: uf2 });
  const throughB = b.client((await admin.api.createToken({ body: { name: "b" } })).token);
  assert.deepEqual(
    (await throughB.api.listFirmware()).map((r) => r.version),
    ["3.1.0"],
  );
  assert.deepEqual(
    Buffer.from(await throughB.downloadFirmware({ version: "3.1.0", board: "pico_w" })),
    Buffer.from(uf2),
  );

  const project = await throughB.api.createProject({ body: { name: "p" } });
  const canary = await raw(`${b.url}/v1/projects/${project.id}/deployments`, {
    method: "POST",
    headers: { authorization: `Bearer ${(await admin.api.createToken({ body: { name: "c" } })).token}` },
    json: {
      bundle: "export default class {}",
      manifest: { board: "pico_w", libraryVersion: "0.1.0" },
      rollout: { canary: { percent: 10 } },
    },
  });
  assert.equal(canary.status, 409, JSON.stringify(canary.body));
  assert.equal(canary.body.error.code, "canary_needs_one_instance");
});

test("two instances: a token revoked through B closes a watch on A; a project deleted through B ends one", {
  timeout: 30_000,
}, async (t) => {
  const s = await twoInstances(t);
  if (!s) return;
  const { a, b } = s;
  const { client } = await a.user("owner@example.com", password);
  const project = await client.api.createProject({ body: { name: "p" } });
  const { device } = await client.api.createDevice({
    params: { projectId: project.id },
    body: { name: "d", board: "pico2_w" },
  });
  const token = await client.api.createToken({ body: { name: "watcher" } });
  const bearer = { authorization: `Bearer ${token.token}` };
  const deviceWatch = await openSocket(
    t,
    wsUrl(a.url, `/v1/projects/${project.id}/devices/${device.id}/watch`),
    { headers: bearer },
  );
  await deviceWatch.inbox.type("snapshot");
  const projectWatch = await openSocket(t, wsUrl(a.url, `/v1/projects/${project.id}/watch`), {
    headers: { authorization: `Bearer ${client.token}` },
  });
  await projectWatch.inbox.type("snapshot");

  const throughB = b.client(client.token);
  await throughB.api.revokeToken({ params: { tokenId: token.id } });
  assert.equal((await deviceWatch.closed).code, 4001, "revoked through B, closed on A");
  await throughB.api.deleteProject({ params: { projectId: project.id } });
  assert.deepEqual(await projectWatch.closed, { code: 4004, reason: "project deleted" });
});

test("two instances: the pins of a board served by A, as B answers them", { timeout: 30_000 }, async (t) => {
  const s = await twoInstances(t);
  if (!s) return;
  const { a, b } = s;
  const { client } = await a.user("owner@example.com", password);
  const project = await client.api.createProject({ body: { name: "p" } });
  const { device, credentials } = await client.api.createDevice({
    params: { projectId: project.id },
    body: { name: "d", board: "pico_w" },
  });
  const sim = simulatedBoard(t, new URL(a.url).host, credentials);
  sim.start();
  await sim.waitFor("connected");
  const params = { projectId: project.id, deviceId: device.id };
  const throughB = b.client(client.token);
  // A command through B runs on A (which serves the board); B learns the pins from A.
  await throughB.api.sendDeviceCommand({
    params,
    body: { type: "gpio_write", args: { pin: "LED", value: 1 } },
  });
  const levels = async (c: typeof client) =>
    (await c.api.getDevicePins({ params })).map((p) => [p.pin, p.mode, p.level]);
  await waitUntil(async () => (await levels(throughB)).length > 0, 10_000, "B knows the pins");
  assert.deepEqual(await levels(throughB), [["LED", "output", 1]]);
  assert.deepEqual(await levels(client), await levels(throughB), "A and B answer the same");
});
