// The Home Assistant bridge against a real Mosquitto: a client subscribed the way Home Assistant
// is checks every discovery config against HA's rules (helpers/home-assistant-rules.ts) while a
// simulated board, real server processes and real deploys go through the whole story.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { type TestContext, test } from "node:test";
import { SimulatedDevice } from "@sdk/simulator";
import { deployScript, startServerProcess, tempDir, waitUntil } from "@sdk/test-helpers";
import {
  checkComponentConfig,
  checkDeviceConfig,
  checkStatePayload,
} from "./helpers/home-assistant-rules.ts";
import {
  answers,
  mosquittoPath,
  privateBroker,
  recorder,
  retainedUnder,
  skipOrFail,
} from "./helpers/mqtt.ts";

const sharedBroker = "mqtt://127.0.0.1:1883";

const script = `
import { DeviceScript } from "@sdk/device";
export default class Home extends DeviceScript {
  async onDeviceConnect() {
    this.env.DEVICE.emitState("temp", 21.5);
    this.env.DEVICE.emitState("door", true);
    this.env.DEVICE.emitState("not_declared", 7);
  }
  async onMessage(msg: any) {
    if (msg.type === "sample") this.env.DEVICE.emitState("temp", msg.value);
    if (msg.type !== "ha_command") return;
    if (msg.kind === "switch") this.env.DEVICE.emitState(msg.entityId, msg.state);
    else this.env.DEVICE.emitState(msg.entityId, { state: msg.state, brightness: msg.brightness, color: msg.color });
  }
}`;

const allEntities = [
  {
    id: "temp",
    kind: "sensor",
    name: "Temperature",
    unit: "°C",
    deviceClass: "temperature",
    stateClass: "measurement",
    displayPrecision: 1,
  },
  { id: "door", kind: "binary_sensor", name: "Door", deviceClass: "door" },
  { id: "pump", kind: "switch", name: "Pump", icon: "mdi:pump" },
  { id: "led", kind: "light", name: "LED", brightness: true, rgb: true },
];

function names() {
  const run = randomBytes(5).toString("hex");
  return { base: `sdktest/${run}/sdk`, prefix: `sdktest/${run}/ha` };
}

async function needBroker(t: TestContext) {
  if (await answers(1883)) return true;
  skipOrFail(t, "no MQTT broker answers on 127.0.0.1:1883 (apt-get install mosquitto)");
  return false;
}

/** A Home Assistant stand-in: records everything and validates every config it is sent. */
async function homeAssistant(t: TestContext, url: string, n: { base: string; prefix: string }) {
  const ha = await recorder(t, url, [`${n.prefix}/#`, `${n.base}/#`]);
  const problems: string[] = [];
  const uniqueIds = new Map<string, string>();
  /** Each entity's config by its state topic, to read its states as Home Assistant would. */
  const byStateTopic = new Map<string, Record<string, unknown>>();
  ha.client.on("message", (topic, payload) => {
    if (payload.length === 0) return;
    try {
      const entity = byStateTopic.get(topic);
      if (entity) return checkStatePayload(entity, payload.toString("utf8"), topic);
      if (!topic.startsWith(`${n.prefix}/`) || !topic.endsWith("/config")) return;
      const config = JSON.parse(payload.toString("utf8"));
      if (topic.startsWith(`${n.prefix}/device/`)) {
        checkDeviceConfig(topic, n.prefix, config, uniqueIds);
        for (const c of Object.values(config.components as Record<string, Record<string, unknown>>))
          if (typeof c.state_topic === "string") byStateTopic.set(c.state_topic, c);
      } else {
        checkComponentConfig(topic, n.prefix, config, uniqueIds);
        const platform = topic.slice(n.prefix.length + 1).split("/")[0];
        byStateTopic.set(config.state_topic, { ...config, platform });
      }
    } catch (error) {
      problems.push(`${topic}: ${(error as Error).message}`);
    }
  });
  t.after(() => assert.deepEqual(problems, [], "every config follows Home Assistant's rules"));
  return { ...ha, problems };
}

async function account(proc: { client(token?: string): import("@sdk/client").SdkClient }) {
  const auth = await proc
    .client()
    .api.register({ body: { email: "a@example.com", password: "correct horse battery", issueToken: true } });
  return auth.token!.token;
}

test("the whole story: deploy, states, commands, availability, kill, birth, removal, deletion", {
  timeout: 90_000,
}, async (t) => {
  if (!(await needBroker(t))) return;
  const n = names();
  t.after(() => cleanUp(n));
  const env = {
    MQTT_URL: sharedBroker,
    MQTT_BASE_TOPIC: n.base,
    HA_DISCOVERY_PREFIX: n.prefix,
    PUBLIC_URL: "http://sdk.test",
  };
  const ha = await homeAssistant(t, sharedBroker, n);
  const dataDir = tempDir(t, "sdk-ha-");
  const first = await startServerProcess(t, dataDir, env);
  const token = await account(first);
  let client = first.client(token);
  let api = client.api;
  const project = await api.createProject({ body: { name: "Home" } });
  const other = await api.createProject({ body: { name: "Other" } });
  const { device, credentials } = await api.createDevice({
    params: { projectId: project.id },
    body: { name: "Greenhouse", board: "pico2_w" },
  });
  const params = { projectId: project.id, deviceId: device.id };
  const deployment = await deployScript(t, client, project.id, script, {
    entities: allEntities,
    board: "pico2_w",
    skipTypeCheck: true,
  });
  assert.equal(deployment.status, "active");

  const configTopic = `${n.prefix}/device/${device.id}/config`;
  const at = (entity: string, leaf: string) => `${n.base}/${project.id}/${device.id}/${entity}/${leaf}`;
  const availability = `${n.base}/${project.id}/${device.id}/availability`;
  const config = JSON.parse((await ha.until(configTopic, Boolean, "the device's discovery config"))!);
  assert.deepEqual(Object.keys(config.components).sort(), ["door", "led", "pump", "temp"]);
  assert.equal(config.device.model, "Pico 2 W");
  assert.equal(config.device.name, "Greenhouse");
  assert.equal(
    config.device.configuration_url,
    `http://sdk.test/projects/${project.id}/devices/${device.id}`,
  );
  assert.equal(config.components.temp.name, "Temperature", "entity names without the device name");
  assert.equal(config.components.temp.default_entity_id, "sensor.greenhouse_temp");
  assert.deepEqual(config.components.led.supported_color_modes, ["rgb"]);
  assert.equal(config.components.led.brightness, true);
  assert.deepEqual(
    config.availability.map((a: { topic: string }) => a.topic),
    [`${n.base}/status`, availability],
  );
  await ha.until(`${n.base}/status`, (p) => p === "online", "server online");
  await ha.until(availability, (p) => p === "offline", "the board is not connected yet");
  const status = await api.getHomeAssistant({ params: { projectId: project.id } });
  assert.equal(status.broker, "127.0.0.1:1883");
  assert.equal(status.devices[0]?.entities.length, 4);
  assert.equal(status.devices[0]?.published, true);

  // The board comes online: availability and states flow; undeclared entities stay on the server.
  const connect = async (url: string) => {
    const sim = new SimulatedDevice({
      server: new URL(url).host,
      deviceId: device.id,
      secret: credentials.secret,
      board: "pico2_w",
      reconnect: false,
    });
    t.after(() => sim.stop());
    sim.start();
    await sim.waitFor("connected", 10_000);
    return sim;
  };
  let sim = await connect(first.url);
  await ha.until(availability, (p) => p === "online", "the board online");
  await ha.until(at("temp", "state"), (p) => p === "21.5", "temperature");
  await ha.until(at("door", "state"), (p) => p === "ON", "door");
  await api.sendDeviceMessage({ params, body: { type: "sample", value: 22.25 } });
  await ha.until(at("temp", "state"), (p) => p === "22.25", "a new temperature");
  assert.ok(
    !ha.seen.some((m) => m.topic.includes("not_declared")),
    "undeclared entity ids are not published",
  );

  // Commands reach onMessage; the confirmed state comes back.
  await ha.client.publishAsync(at("pump", "set"), "ON", { qos: 1 });
  await ha.until(at("pump", "state"), (p) => p === "ON", "pump confirmed");
  await ha.client.publishAsync(
    at("led", "set"),
    JSON.stringify({ state: "ON", brightness: 128, color: { r: 255, g: 0, b: 0 } }),
    { qos: 1 },
  );
  const led = await ha.until(at("led", "state"), Boolean, "light confirmed");
  assert.deepEqual(JSON.parse(led!), {
    state: "ON",
    color_mode: "rgb",
    brightness: 128,
    color: { r: 255, g: 0, b: 0 },
  });
  // Another project's topic naming this device, and a malformed command: dropped.
  await ha.client.publishAsync(`${n.base}/${other.id}/${device.id}/pump/set`, "OFF", { qos: 1 });
  await ha.client.publishAsync(at("led", "set"), "not json", { qos: 1 });
  await ha.client.publishAsync(at("led", "set"), JSON.stringify({ state: "OFF" }), { qos: 1 });
  await ha.until(at("led", "state"), (p) => JSON.parse(p ?? "{}").state === "OFF", "light off");
  assert.equal(ha.latest.get(at("pump", "state")), "ON", "the other project's topic never reached the pump");
  await waitUntil(
    async () =>
      (await api.listDeviceLogs({ params, query: { limit: 50 } })).some((l) =>
        /command dropped: .*must be JSON/.test(l.message),
      ),
    10_000,
    "the malformed command in the device log",
  );

  // Board offline → unavailable; server killed → last will; server back → everything available.
  await sim.stop();
  await ha.until(availability, (p) => p === "offline", "the board offline");
  // Commands for an offline board and for an undeclared entity: logged in the device log, dropped.
  const logged = (line: RegExp, what: string) =>
    waitUntil(
      async () =>
        (await api.listDeviceLogs({ params, query: { limit: 50 } })).some((l) => line.test(l.message)),
      10_000,
      `the ${what} command in the device log`,
    );
  await ha.client.publishAsync(at("pump", "set"), "OFF", { qos: 1 });
  await ha.client.publishAsync(at("fan", "set"), "ON", { qos: 1 });
  await logged(/command for "pump" was dropped: the device is offline/, "offline");
  await logged(/command for "fan" was dropped: ha\.entities declares no switch or light/, "undeclared");
  await first.stop("SIGKILL");
  await ha.until(`${n.base}/status`, (p) => p === "offline", "the server's last will");
  // A config of this bridge for a board that no longer exists: a ghost the next start clears.
  const ghostTopic = `${n.prefix}/device/dev_ghost/config`;
  const ghost = {
    ...config,
    device: { identifiers: ["sdk_dev_ghost"], name: "Ghost" },
    components: {
      x: { platform: "sensor", unique_id: "sdk_ghost_x", name: "X", state_topic: `${n.base}/ghost/x/state` },
    },
  };
  await ha.client.publishAsync(ghostTopic, JSON.stringify(ghost), { qos: 1, retain: true });
  // A retained command (commands are never retained): the next server reads it at start and drops it.
  await ha.client.publishAsync(at("pump", "set"), "OFF", { qos: 1, retain: true });
  const configsBefore = ha.count(configTopic);
  const second = await startServerProcess(t, dataDir, env);
  client = second.client(token);
  api = client.api;
  await ha.until(`${n.base}/status`, (p) => p === "online", "the server back");
  await logged(/retained command for "pump" was dropped/, "retained");
  await ha.client.publishAsync(at("pump", "set"), "", { qos: 1, retain: true });
  sim = await connect(second.url);
  await ha.until(availability, (p) => p === "online", "the board back");
  assert.equal(ha.latest.get(at("pump", "state")), "ON", "no dropped command reached the pump");
  assert.equal(ha.count(configTopic), configsBefore, "an unchanged config is not republished at start");
  await ha.until(ghostTopic, (p) => p === undefined, "the ghost config cleared at start");

  // Home Assistant restarts: its birth message brings availability and last states again.
  const statesBefore = ha.count(at("temp", "state"));
  const availabilityBefore = ha.count(availability);
  await ha.client.publishAsync(`${n.prefix}/status`, "online", { qos: 1 });
  await waitUntil(
    () => ha.count(availability) > availabilityBefore && ha.count(at("temp", "state")) > statesBefore,
    10_000,
    "republished after the birth message",
  );

  // An entity removed from sdk.ts disappears: the removal form, then the config without it.
  const before = ha.count(configTopic);
  await deployScript(t, client, project.id, script, {
    entities: allEntities.filter((e) => e.id !== "door"),
    board: "pico2_w",
    skipTypeCheck: true,
  });
  await waitUntil(
    () => !("door" in JSON.parse(ha.latest.get(configTopic) ?? "{}").components),
    10_000,
    "door gone",
  );
  const updates = ha.seen
    .filter((m) => m.topic === configTopic)
    .slice(before)
    .map((m) => JSON.parse(m.payload));
  assert.deepEqual(
    updates[0].components.door,
    { platform: "binary_sensor" },
    "the documented removal form first",
  );
  await ha.until(at("door", "state"), (p) => p === undefined, "the door's retained state cleared");
  const published = await api.getHomeAssistant({ params: { projectId: project.id } });
  assert.deepEqual(published.devices[0]?.entities.map((e) => e.id).sort(), ["led", "pump", "temp"]);

  // The device deleted: its retained configs, availability and states are cleared.
  await api.deleteDevice({ params });
  await ha.until(configTopic, (p) => p === undefined, "the config cleared");
  await waitUntil(
    async () => (await retainedUnder(sharedBroker, `sdktest/${n.base.split("/")[1]}/#`)).size === 1,
    10_000,
    "only the server status retained",
  );
  const left = await retainedUnder(sharedBroker, `sdktest/${n.base.split("/")[1]}/#`);
  assert.deepEqual([...left.keys()], [`${n.base}/status`]);
  await second.stop("SIGTERM", 10_000);
  assert.deepEqual(ha.problems, []);
});

test("broker down at start, then up: the bridge catches up; a device deleted in HA comes back only with a deploy", {
  timeout: 120_000,
}, async (t) => {
  if (!mosquittoPath()) return skipOrFail(t, "mosquitto is not installed (apt-get install mosquitto)");
  const broker = await privateBroker(t);
  const n = names();
  const env = { MQTT_URL: broker.url, MQTT_BASE_TOPIC: n.base, HA_DISCOVERY_PREFIX: n.prefix };
  const proc = await startServerProcess(t, undefined, env);
  const token = await account(proc);
  const client = proc.client(token);
  const api = client.api;
  const project = await api.createProject({ body: { name: "Home" } });
  const { device } = await api.createDevice({
    params: { projectId: project.id },
    body: { name: "Shed", board: "pico_w" },
  });
  await deployScript(t, client, project.id, script, { entities: allEntities, skipTypeCheck: true });
  assert.equal((await api.getHomeAssistant({ params: { projectId: project.id } })).connected, false);

  await broker.start();
  const ha = await homeAssistant(t, broker.url, n);
  const configTopic = `${n.prefix}/device/${device.id}/config`;
  // The client's reconnect backoff reaches 30 s: 60 s covers one full wait and the sync after it.
  await ha.until(configTopic, Boolean, "the config published once the broker is up", 60_000);
  await waitUntil(
    async () => (await api.getHomeAssistant({ params: { projectId: project.id } })).connected,
    10_000,
    "connected",
  );

  // The owner deletes the device in Home Assistant's UI: HA publishes an empty retained config.
  await ha.client.publishAsync(configTopic, "", { qos: 1, retain: true });
  await waitUntil(
    async () =>
      (await api.getHomeAssistant({ params: { projectId: project.id } })).devices[0]
        ?.deletedInHomeAssistant === true,
    10_000,
    "the bridge noticed the UI delete",
  );
  const availability = `${n.base}/${project.id}/${device.id}/availability`;
  const before = ha.count(availability);
  await ha.client.publishAsync(`${n.prefix}/status`, "online", { qos: 1 });
  await waitUntil(() => ha.count(availability) > before, 10_000, "the birth message handled");
  assert.equal(
    (await retainedUnder(broker.url, configTopic)).size,
    0,
    "the birth message does not bring it back",
  );
  await deployScript(t, client, project.id, script, { entities: allEntities, skipTypeCheck: true });
  await ha.until(configTopic, Boolean, "the next deploy publishes it again");
  assert.deepEqual(ha.problems, []);
});

test("HA_DISCOVERY=component: one retained config per entity, valid for older Home Assistant", {
  timeout: 60_000,
}, async (t) => {
  if (!(await needBroker(t))) return;
  const n = names();
  t.after(() => cleanUp(n));
  const env = {
    MQTT_URL: sharedBroker,
    MQTT_BASE_TOPIC: n.base,
    HA_DISCOVERY_PREFIX: n.prefix,
    HA_DISCOVERY: "component",
  };
  const ha = await homeAssistant(t, sharedBroker, n);
  const proc = await startServerProcess(t, undefined, env);
  const client = proc.client(await account(proc));
  const api = client.api;
  const project = await api.createProject({ body: { name: "Home" } });
  const { device } = await api.createDevice({
    params: { projectId: project.id },
    body: { name: "Shed", board: "pico_w" },
  });
  await deployScript(t, client, project.id, script, { entities: allEntities, skipTypeCheck: true });
  for (const e of allEntities)
    await ha.until(`${n.prefix}/${e.kind}/${device.id}/${e.id}/config`, Boolean, `${e.id}'s config`);
  await api.deleteProject({ params: { projectId: project.id } });
  for (const e of allEntities)
    await ha.until(
      `${n.prefix}/${e.kind}/${device.id}/${e.id}/config`,
      (p) => p === undefined,
      `${e.id} cleared`,
    );
  await proc.stop("SIGTERM", 10_000);
  assert.deepEqual(ha.problems, []);
});

/** The shared broker keeps nothing of a test run. */
async function cleanUp(n: { base: string }) {
  const root = n.base.split("/").slice(0, 2).join("/");
  const left = await retainedUnder(sharedBroker, `${root}/#`);
  const { default: mqtt } = await import("mqtt");
  const client = await mqtt.connectAsync(sharedBroker);
  for (const topic of left.keys()) await client.publishAsync(topic, "", { qos: 1, retain: true });
  await client.endAsync();
}
