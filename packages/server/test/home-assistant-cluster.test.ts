// The Home Assistant bridges of two instances of a cluster on one real Mosquitto (127.0.0.1:1883):
// each Home Assistant command is handled by one of them (an MQTT v5 shared subscription), each
// state is published once (by the instance whose event it is), and when one instance's last will
// says the server is offline, the others say it is online again.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { type TestContext, test } from "node:test";
import { waitUntil } from "@sdk/test-helpers";
import mqtt from "mqtt";
import type { Config } from "../src/config.ts";
import type { EventBus } from "../src/events/bus.ts";
import { homeAssistantBridge } from "../src/extensions/home-assistant/bridge.ts";
import type { BridgeStatusSource } from "../src/services/home-assistant.ts";
import { clusterBuses } from "./helpers/cluster-buses.ts";
import { answers, retainedUnder, skipOrFail } from "./helpers/mqtt.ts";

const broker = "mqtt://127.0.0.1:1883";
const entities = [
  { id: "pump", kind: "switch", name: "Pump" },
  { id: "temp", kind: "sensor", name: "Temperature", unit: "°C", deviceClass: "temperature" },
];
const device = {
  id: "dev_1",
  projectId: "prj_1",
  name: "Greenhouse",
  board: "pico2_w",
  status: "online",
  lastSeenAt: 0,
  firmwareVersion: "1.0.0",
  createdAt: 0,
  updatedAt: 0,
};

/** Two bridges (instances A and B) of one cluster, with the services they read faked. */
async function twoBridges(t: TestContext) {
  const run = randomBytes(5).toString("hex");
  const n = { base: `sdktest/${run}/sdk`, prefix: `sdktest/${run}/ha` };
  const { buses } = clusterBuses(2);
  const delivered: { by: string; message: Record<string, unknown> }[] = [];
  const logs: string[] = [];
  const sources: (BridgeStatusSource | null)[] = [];
  const quiet = { info() {}, warn() {}, error() {} };
  const bridges = (["A", "B"] as const).map((name, i) => {
    const live = { projectId: "prj_1", deploymentId: "dep_1", entities, dropped: [] };
    const services = {
      homeAssistant: {
        liveProjects: async () => [live],
        liveEntities: async () => live,
        devicesOf: async () => [device],
        latestStates: async () => new Map(),
        attach: (source: BridgeStatusSource | null) => {
          sources[i] = source;
        },
      },
      deviceLogs: {
        append: async (_d: unknown, _l: unknown, _s: unknown, message: string) => logs.push(message),
      },
      scripts: {
        deliver: (_device: unknown, message: Record<string, unknown>) =>
          void delivered.push({ by: name, message }),
      },
    };
    const config = {
      homeAssistant: {
        mqttUrl: broker,
        broker: "127.0.0.1:1883",
        baseTopic: n.base,
        discoveryPrefix: n.prefix,
        discovery: "device",
      },
      cluster: { natsUrl: "", natsServer: "", name: `t${run}`, instanceId: name, leaseSeconds: 10 },
      publicUrl: null,
    } as unknown as Config;
    return homeAssistantBridge({
      bus: buses[i]!,
      services: services as never,
      config,
      logger: quiet as never,
      version: "0.0.0",
      port: () => 0,
    });
  });
  t.after(async () => {
    for (const b of bridges) await b.stop();
    const left = await retainedUnder(broker, `sdktest/${run}/#`);
    const client = await mqtt.connectAsync(broker);
    for (const topic of left.keys()) await client.publishAsync(topic, "", { qos: 1, retain: true });
    await client.endAsync();
  });
  for (const b of bridges) await b.start();
  await waitUntil(
    () => sources.length === 2 && sources.every((s) => s?.connected()),
    15_000,
    "both bridges synced",
  );
  return { n, buses: buses as [EventBus, EventBus], delivered, logs };
}

test("two instances' bridges: each command is handled once, each state published once", {
  timeout: 60_000,
}, async (t) => {
  if (!(await answers(1883)))
    return skipOrFail(t, "no MQTT broker answers on 127.0.0.1:1883 (apt-get install mosquitto)");
  const { n, buses, delivered, logs } = await twoBridges(t);
  const status = `${n.base}/status`;
  const stateTopic = `${n.base}/prj_1/dev_1/temp/state`;

  // Home Assistant's side: publishes commands, sees what the bridges publish and who sent it.
  const ha = await mqtt.connectAsync(broker, { protocolVersion: 5 });
  t.after(() => ha.endAsync());
  const seen: { topic: string; payload: string; by: unknown }[] = [];
  ha.on("message", (topic, payload, packet) =>
    seen.push({ topic, payload: payload.toString(), by: packet.properties?.userProperties?.["sdk-bridge"] }),
  );
  await ha.subscribeAsync([status, stateTopic], { qos: 1 });

  for (let i = 0; i < 10; i++)
    await ha.publishAsync(`${n.base}/prj_1/dev_1/pump/set`, i % 2 ? "OFF" : "ON", { qos: 1 });
  await buses[0].publish("device.state", {
    projectId: "prj_1",
    deviceId: "dev_1",
    entityId: "temp",
    value: 21.5,
    at: Date.now(),
  });
  await waitUntil(() => seen.some((m) => m.topic === stateTopic), 10_000, "the state on the broker");

  // An instance's last will: the others say online again. Once both have, each has handled every
  // message the broker sent it before (one connection delivers in order).
  const from = seen.length;
  await ha.publishAsync(status, "offline", { qos: 1, retain: true });
  await waitUntil(
    () =>
      ["A", "B"].every((by) =>
        seen.slice(from).some((m) => m.topic === status && m.payload === "online" && m.by === by),
      ),
    10_000,
    "both instances say online again",
  );
  assert.equal(
    (await retainedUnder(broker, status)).get(status),
    "online",
    "the server is online for Home Assistant",
  );

  assert.equal(delivered.length, 10, `each command once (${delivered.map((d) => d.by).join("")})`);
  assert.deepEqual(delivered.map((d) => d.message.state).sort(), [
    "OFF",
    "OFF",
    "OFF",
    "OFF",
    "OFF",
    "ON",
    "ON",
    "ON",
    "ON",
    "ON",
  ]);
  assert.deepEqual(
    seen.filter((m) => m.topic === stateTopic).map((m) => [m.payload, m.by]),
    [["21.5", "A"]],
    "the state once, by the instance whose event it was",
  );
  assert.deepEqual(logs, []);
});
