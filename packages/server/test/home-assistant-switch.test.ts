// HA_DISCOVERY and HA_DISCOVERY_PREFIX can change between two runs of the server: the entities are
// published in the new form and the old one is cleared. Only a config the bridge knows it published
// (its retained marker names the topic) and that is gone counts as deleted in Home Assistant's UI,
// and that survives a restart of the server.
import assert from "node:assert/strict";
import { type TestContext, test } from "node:test";
import { deployScript, startServerProcess, tempDir, waitUntil } from "@sdk/test-helpers";
import { mosquittoPath, privateBroker, recorder, retainedUnder, skipOrFail } from "./helpers/mqtt.ts";

const script = `import { DeviceScript } from "@sdk/device";
export default class S extends DeviceScript { async onDeviceConnect() {} }`;
const entities = [
  { id: "pump", kind: "switch", name: "Pump" },
  { id: "door", kind: "binary_sensor", name: "Door" },
];

async function setUp(t: TestContext, env: Record<string, string>) {
  const broker = await privateBroker(t);
  await broker.start();
  const base = `sdk${Math.random().toString(36).slice(2, 8)}`;
  const dataDir = tempDir(t, "sdk-ha-switch-");
  const envOf = (more: Record<string, string>) => ({ MQTT_URL: broker.url, MQTT_BASE_TOPIC: base, ...more });
  const first = await startServerProcess(t, dataDir, envOf(env));
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
  await deployScript(t, client, project.id, script, { entities, skipTypeCheck: true });
  const recorderFor = (prefix: string) => recorder(t, broker.url, [`${prefix}/#`]);
  /** Restarts the server with other settings; resolves once its bridge has synced. */
  const restart = async (proc: typeof first, more: Record<string, string>) => {
    await proc.stop("SIGTERM", 10_000);
    const next = await startServerProcess(t, dataDir, envOf(more));
    await waitUntil(async () => (await status(next)).connected, 30_000, "the bridge connected");
    return next;
  };
  const status = (proc: typeof first) =>
    proc.client(token).api.getHomeAssistant({ params: { projectId: project.id } });
  return { broker, token, first, project, device, recorderFor, restart, status };
}

const deviceTopic = (prefix: string, deviceId: string) => `${prefix}/device/${deviceId}/config`;
const componentTopics = (prefix: string, deviceId: string) =>
  entities.map((e) => `${prefix}/${e.kind}/${deviceId}/${e.id}/config`);

test("switching HA_DISCOVERY republishes in the new form and clears the old one", {
  timeout: 120_000,
}, async (t) => {
  if (!mosquittoPath()) return skipOrFail(t, "mosquitto is not installed (apt-get install mosquitto)");
  const prefix = `mode${Math.random().toString(36).slice(2, 8)}`;
  const s = await setUp(t, { HA_DISCOVERY_PREFIX: prefix });
  const ha = await s.recorderFor(prefix);
  let proc = s.first;
  await ha.until(deviceTopic(prefix, s.device.id), Boolean, "the device config");

  proc = await s.restart(proc, { HA_DISCOVERY_PREFIX: prefix, HA_DISCOVERY: "component" });
  for (const topic of componentTopics(prefix, s.device.id))
    await ha.until(topic, Boolean, "a component config");
  await ha.until(deviceTopic(prefix, s.device.id), (p) => p === undefined, "the device form cleared");
  const [shown] = (await s.status(proc)).devices;
  assert.equal(shown?.deletedInHomeAssistant, false, "a mode switch is no delete in Home Assistant");
  assert.equal(shown?.published, true);

  proc = await s.restart(proc, { HA_DISCOVERY_PREFIX: prefix, HA_DISCOVERY: "device" });
  await ha.until(deviceTopic(prefix, s.device.id), Boolean, "the device config again");
  for (const topic of componentTopics(prefix, s.device.id))
    await ha.until(topic, (p) => p === undefined, "the component form cleared");
  assert.equal((await s.status(proc)).devices[0]?.published, true);
  await proc.stop("SIGTERM", 10_000);
});

test("switching HA_DISCOVERY_PREFIX republishes under the new prefix and clears the old one", {
  timeout: 120_000,
}, async (t) => {
  if (!mosquittoPath()) return skipOrFail(t, "mosquitto is not installed (apt-get install mosquitto)");
  const run = Math.random().toString(36).slice(2, 8);
  const [oldPrefix, newPrefix] = [`old${run}`, `new${run}`];
  const s = await setUp(t, { HA_DISCOVERY_PREFIX: oldPrefix });
  const old = await s.recorderFor(oldPrefix);
  await old.until(deviceTopic(oldPrefix, s.device.id), Boolean, "the config under the old prefix");
  const fresh = await s.recorderFor(newPrefix);
  const proc = await s.restart(s.first, { HA_DISCOVERY_PREFIX: newPrefix });
  await fresh.until(deviceTopic(newPrefix, s.device.id), Boolean, "the config under the new prefix");
  await old.until(deviceTopic(oldPrefix, s.device.id), (p) => p === undefined, "the old prefix cleared");
  assert.equal((await s.status(proc)).devices[0]?.deletedInHomeAssistant, false);
  await proc.stop("SIGTERM", 10_000);
});

test("a device deleted in Home Assistant's UI stays deleted across a server restart, until a deploy", {
  timeout: 120_000,
}, async (t) => {
  if (!mosquittoPath()) return skipOrFail(t, "mosquitto is not installed (apt-get install mosquitto)");
  const run = Math.random().toString(36).slice(2, 8);
  const prefix = `ui${run}`;
  const s = await setUp(t, { HA_DISCOVERY_PREFIX: prefix });
  const ha = await s.recorderFor(prefix);
  const topic = deviceTopic(prefix, s.device.id);
  await ha.until(topic, Boolean, "the device config");
  await waitUntil(async () => (await s.status(s.first)).devices[0]?.published === true, 10_000, "published");
  await ha.client.publishAsync(topic, "", { qos: 1, retain: true });
  await waitUntil(
    async () => (await s.status(s.first)).devices[0]?.deletedInHomeAssistant === true,
    10_000,
    "the bridge noticed the UI delete",
  );
  const proc = await s.restart(s.first, { HA_DISCOVERY_PREFIX: prefix });
  assert.equal(
    (await s.status(proc)).devices[0]?.deletedInHomeAssistant,
    true,
    "still deleted after a restart",
  );
  assert.equal((await retainedUnder(s.broker.url, topic)).size, 0, "not published again at start");
  await deployScript(t, proc.client(s.token), s.project.id, script, { entities, skipTypeCheck: true });
  await ha.until(topic, Boolean, "the next deploy publishes it again");
  assert.equal((await s.status(proc)).devices[0]?.deletedInHomeAssistant, false);
  await proc.stop("SIGTERM", 10_000);
});

test("deleting a device while the broker does not answer: the REST delete answers, the configs are cleared later", {
  timeout: 120_000,
}, async (t) => {
  if (!mosquittoPath()) return skipOrFail(t, "mosquitto is not installed (apt-get install mosquitto)");
  const prefix = `del${Math.random().toString(36).slice(2, 8)}`;
  const s = await setUp(t, { HA_DISCOVERY_PREFIX: prefix });
  const api = s.first.client(s.token).api;
  const { device: second } = await api.createDevice({
    params: { projectId: s.project.id },
    body: { name: "Barn", board: "pico_w" },
  });
  const ha = await s.recorderFor(prefix);
  for (const d of [s.device, second]) await ha.until(deviceTopic(prefix, d.id), Boolean, "a device config");

  // Frozen broker: the connection looks alive but no publish is acknowledged.
  s.broker.pause();
  const started = performance.now();
  await api.deleteDevice({ params: { projectId: s.project.id, deviceId: s.device.id } });
  const took = performance.now() - started;
  assert.ok(took < 6_000, `the delete answered in ${Math.round(took)} ms, not bounded by the broker`);
  s.broker.resume();
  await ha.until(deviceTopic(prefix, s.device.id), (p) => p === undefined, "the first config cleared");

  // Broker stopped: the delete answers at once; the config is cleared when the broker is back.
  await s.broker.stop();
  await waitUntil(
    async () => !(await s.status(s.first)).connected,
    10_000,
    "the bridge sees the broker gone",
  );
  const again = performance.now();
  await api.deleteDevice({ params: { projectId: s.project.id, deviceId: second.id } });
  assert.ok(performance.now() - again < 3_000, "the delete does not wait for the broker");
  await s.broker.start();
  await waitUntil(
    async () => (await retainedUnder(s.broker.url, `${prefix}/#`)).size === 0,
    60_000,
    "the second config cleared once the broker is back",
  );
  await s.first.stop("SIGTERM", 10_000);
});
