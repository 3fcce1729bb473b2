import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { SimulatedDevice } from "@sdk/simulator";
import { waitUntil } from "@sdk/test-helpers";
import { startTestServer } from "./helpers/server.ts";
import { openSocket, wsUrl } from "./helpers/sockets.ts";

type T = Parameters<typeof startTestServer>[0];

async function setup(
  t: T,
  options: Parameters<typeof startTestServer>[1] = {},
  board: "pico_w" | "pico2_w" = "pico_w",
) {
  const s = await startTestServer(t, options);
  const { client } = await s.user();
  const project = await client.api.createProject({ body: { name: "p" } });
  const { device, credentials } = await client.api.createDevice({
    params: { projectId: project.id },
    body: { name: "d", board },
  });
  const ids = { projectId: project.id, deviceId: device.id };
  const host = new URL(s.url).host; // host:port → plain ws:// by the URL rule
  const simulator = (reconnect: false | { baseMs: number } = false) => {
    const sim = new SimulatedDevice({
      server: host,
      deviceId: device.id,
      secret: credentials.secret,
      board,
      reconnect,
    });
    t.after(() => sim.stop());
    return sim;
  };
  const watch = () =>
    openSocket(t, wsUrl(s.url, `/v1/projects/${project.id}/devices/${device.id}/watch`), {
      headers: { authorization: `Bearer ${client.token}` },
    });
  return { ...s, client, project, device, credentials, ids, simulator, watch };
}

test("a simulated board goes online and offline on the watch socket in real time", async (t) => {
  const s = await setup(t);
  const watch = await s.watch();
  await watch.inbox.type("snapshot");
  const sim = s.simulator().start();
  await sim.waitFor("connected");
  await watch.inbox.next((m) => m.type === "status" && m.status === "online");
  assert.equal((await s.client.api.getDevice({ params: s.ids })).status, "online");
  await sim.stop();
  const offline = await watch.inbox.next((m) => m.type === "status" && m.status === "offline");
  assert.match(offline.reason, /device stopped/);
});

test("wrong secret: the simulator is told 'Invalid device credentials' and stops", async (t) => {
  const s = await setup(t);
  const sim = new SimulatedDevice({
    server: new URL(s.url).host,
    deviceId: s.device.id,
    secret: "dsk_wrong",
    reconnect: { baseMs: 20, capMs: 200 },
  });
  t.after(() => sim.stop());
  sim.start();
  const idle = sim.waitFor("idle");
  const failure = await sim.waitFor("authFailed");
  assert.equal(failure.status, 401);
  assert.equal(failure.message, "Invalid device credentials");
  await idle;
  assert.equal((await s.client.api.getDevice({ params: s.ids })).status, "offline");
});

test("killing the simulator process (no close frame) turns the device offline", async (t) => {
  const s = await setup(t, { env: { HEARTBEAT_SECONDS: "1" } });
  const watch = await s.watch();
  await watch.inbox.type("snapshot");
  const cli = fileURLToPath(import.meta.resolve("@sdk/simulator/cli"));
  const child = spawn(
    process.execPath,
    [
      cli,
      "--server",
      new URL(s.url).host,
      "--device",
      s.device.id,
      "--secret",
      s.credentials.secret,
      "--quiet",
    ],
    { stdio: "ignore" },
  );
  t.after(() => child.kill("SIGKILL"));
  await watch.inbox.next((m) => m.type === "status" && m.status === "online");
  const killedAt = performance.now();
  child.kill("SIGKILL");
  // The dropped connection or, at the latest, two missed heartbeats turn it offline; the inbox's
  // timeout only guards against a hang (wall-clock bounds break on a loaded machine).
  await watch.inbox.next((m) => m.type === "status" && m.status === "offline");
  t.diagnostic(`offline ${Math.round(performance.now() - killedAt)}ms after SIGKILL`);
});

test("a frozen board (socket open, nothing answered) goes offline after two missed heartbeats", async (t) => {
  const s = await setup(t, { env: { HEARTBEAT_SECONDS: "1" } });
  const watch = await s.watch();
  await watch.inbox.type("snapshot");
  const sim = s.simulator().start();
  await sim.waitFor("connected");
  await watch.inbox.next((m) => m.type === "status" && m.status === "online");
  sim.freeze();
  const frozenAt = performance.now();
  const offline = await watch.inbox.next((m) => m.type === "status" && m.status === "offline");
  assert.equal(offline.reason, "heartbeat timeout");
  t.diagnostic(`offline ${Math.round(performance.now() - frozenAt)}ms after freezing`);
});

test("logs and state survive a server restart; every device starts offline", async (t) => {
  const s = await setup(t);
  const sim = s.simulator().start();
  await sim.waitFor("connected");
  sim.sendLog("info", "before the restart");
  sim.sendState("humidity", 55);
  await waitUntil(async () => (await s.client.api.getDeviceState({ params: s.ids })).length === 1);
  await s.server.close(); // the device is still connected at this moment

  const again = await startTestServer(t, { dataDir: s.dataDir });
  const client = again.client(s.client.token);
  assert.equal((await client.api.getDevice({ params: s.ids })).status, "offline");
  const logs = await client.api.listDeviceLogs({ params: s.ids });
  assert.ok(logs.some((l) => l.message === "before the restart"));
  assert.deepEqual(
    (await client.api.getDeviceState({ params: s.ids })).map((v) => [v.entityId, v.value]),
    [["humidity", 55]],
  );
});
