// Deployments stored before the Home Assistant entity rules (an id with `.`, a unit that does not
// match the device class) must not stop a server with MQTT_URL set: those entities are left out,
// once in the device log per deploy, and the others are published.
import assert from "node:assert/strict";
import path from "node:path";
import { DatabaseSync } from "node:sqlite";
import { test } from "node:test";
import { deployScript, startServerProcess, tempDir, waitUntil } from "@sdk/test-helpers";
import { mosquittoPath, privateBroker, recorder, skipOrFail } from "./helpers/mqtt.ts";

const script = `import { DeviceScript } from "@sdk/device";
export default class S extends DeviceScript { async onDeviceConnect() {} }`;

test("a legacy deployment with entities Home Assistant refuses: the server starts and publishes the rest", {
  timeout: 90_000,
}, async (t) => {
  if (!mosquittoPath()) return skipOrFail(t, "mosquitto is not installed (apt-get install mosquitto)");
  const broker = await privateBroker(t);
  await broker.start();
  const run = Math.random().toString(36).slice(2, 8);
  const n = { base: `legacy${run}/sdk`, prefix: `legacy${run}/ha` };
  const dataDir = tempDir(t, "sdk-ha-legacy-");
  const first = await startServerProcess(t, dataDir);
  const auth = await first
    .client()
    .api.register({ body: { email: "a@example.com", password: "correct horse battery", issueToken: true } });
  const token = auth.token!.token;
  const client = first.client(token);
  const project = await client.api.createProject({ body: { name: "Home" } });
  const { device } = await client.api.createDevice({
    params: { projectId: project.id },
    body: { name: "Shed", board: "pico_w" },
  });
  await deployScript(t, client, project.id, script, {
    entities: [{ id: "pump", kind: "switch", name: "Pump" }],
    skipTypeCheck: true,
  });
  await first.stop("SIGTERM", 10_000);

  // What an older server stored: entities the Home Assistant rules now refuse.
  const db = new DatabaseSync(path.join(dataDir, "sdk.db"));
  try {
    const row = db.prepare("SELECT id, manifest FROM deployments WHERE status = 'active'").get() as {
      id: string;
      manifest: string;
    };
    const manifest = JSON.parse(row.manifest);
    manifest.entities.push(
      { id: "room.temp", kind: "sensor", name: "Room" },
      { id: "outside", kind: "sensor", name: "Outside", deviceClass: "temperature", unit: "km" },
    );
    db.prepare("UPDATE deployments SET manifest = ? WHERE id = ?").run(JSON.stringify(manifest), row.id);
  } finally {
    db.close();
  }

  const ha = await recorder(t, broker.url, [`${n.prefix}/#`]);
  const env = { MQTT_URL: broker.url, MQTT_BASE_TOPIC: n.base, HA_DISCOVERY_PREFIX: n.prefix };
  const second = await startServerProcess(t, dataDir, env);
  const api = second.client(token).api;
  const configTopic = `${n.prefix}/device/${device.id}/config`;
  const config = JSON.parse((await ha.until(configTopic, Boolean, "the device's config"))!);
  assert.deepEqual(Object.keys(config.components), ["pump"]);
  const params = { projectId: project.id, deviceId: device.id };
  const noted = async () =>
    (await api.listDeviceLogs({ params, query: { limit: 50 } })).filter((l) =>
      l.message.includes("not published"),
    );
  await waitUntil(async () => (await noted()).length > 0, 10_000, "the left-out entities in the device log");
  const [line] = await noted();
  assert.match(line!.message, /"room\.temp"/);
  assert.match(line!.message, /"outside" \(unit .*km/);

  // A reconnect syncs again: no second line for the same deployment.
  await broker.stop();
  await waitUntil(
    async () => !(await api.getHomeAssistant({ params: { projectId: project.id } })).connected,
    10_000,
    "the bridge notices the broker is gone",
  );
  await broker.start();
  await waitUntil(
    async () => (await api.getHomeAssistant({ params: { projectId: project.id } })).connected,
    60_000,
    "the bridge back on the broker",
  );
  assert.equal((await noted()).length, 1, "logged once per deploy, not per sync");
  await second.stop("SIGTERM", 10_000);
});

test("MQTT_URL with a percent-encoded password (`@`, `:`, `/`, `%`): the bridge logs in", {
  timeout: 60_000,
}, async (t) => {
  if (!mosquittoPath()) return skipOrFail(t, "mosquitto is not installed (apt-get install mosquitto)");
  const password = "p@ss:w/0rd%";
  const broker = await privateBroker(t, { user: { name: "sdk", password } });
  await broker.start();
  const url = `mqtt://sdk:${encodeURIComponent(password)}@127.0.0.1:${broker.port}`;
  const proc = await startServerProcess(t, undefined, { MQTT_URL: url });
  const auth = await proc
    .client()
    .api.register({ body: { email: "a@example.com", password: "correct horse battery", issueToken: true } });
  const api = proc.client(auth.token!.token).api;
  const project = await api.createProject({ body: { name: "Home" } });
  await waitUntil(
    async () => (await api.getHomeAssistant({ params: { projectId: project.id } })).connected,
    20_000,
    "the bridge logged in with the decoded password",
  );
  await proc.stop("SIGTERM", 10_000);
});
