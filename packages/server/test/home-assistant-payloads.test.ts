// The bridge's pure parts: topics, discovery configs, state payloads and command decoding.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { EntityConfig } from "@sdk/protocol";
import { decodeCommand } from "../src/extensions/home-assistant/commands.ts";
import {
  componentConfigs,
  componentOf,
  type DiscoveryInput,
  deviceConfig,
  entityNameOf,
  slug,
} from "../src/extensions/home-assistant/discovery.ts";
import { encodeState } from "../src/extensions/home-assistant/states.ts";
import { topicsFor } from "../src/extensions/home-assistant/topics.ts";

const topics = topicsFor("home/sdk", "homeassistant");
const light = (extra: Partial<EntityConfig> = {}): EntityConfig => ({
  id: "led",
  kind: "light",
  name: "LED",
  ...extra,
});
const input = (entities: EntityConfig[], extra: Partial<DiscoveryInput> = {}): DiscoveryInput => ({
  projectId: "prj_a",
  deviceId: "dev_b",
  deviceName: "Grünes Haus",
  board: "pico_w",
  firmwareVersion: "1.4.0",
  entities,
  serverVersion: "0.9.0",
  publicUrl: null,
  ...extra,
});

test("topics: under the base and prefix; the project is part of every device topic", () => {
  assert.equal(topics.command("prj_a", "dev_b", "pump"), "home/sdk/prj_a/dev_b/pump/set");
  assert.deepEqual(topics.parse("home/sdk/prj_a/dev_b/pump/set"), {
    projectId: "prj_a",
    deviceId: "dev_b",
    rest: ["pump", "set"],
  });
  assert.equal(topics.parse("other/sdk/prj_a/dev_b/pump/set"), null);
  assert.deepEqual(topics.parseConfig("homeassistant/device/dev_b/config"), { deviceId: "dev_b" });
  assert.deepEqual(topics.parseConfig("homeassistant/switch/dev_b/pump/config"), {
    platform: "switch",
    deviceId: "dev_b",
    entityId: "pump",
  });
  assert.equal(topics.parseConfig("homeassistant/status"), null);
});

test("discovery: ids from ids only, default_entity_id with its domain, no object_id, device and origin blocks", () => {
  const sensor: EntityConfig = {
    id: "temp",
    kind: "sensor",
    name: "Temperature",
    unit: "°C",
    deviceClass: "temperature",
    stateClass: "measurement",
    displayPrecision: 1,
  };
  const config = deviceConfig(input([sensor]), topics) as Record<string, any>;
  assert.deepEqual(config.device, {
    identifiers: ["sdk_dev_b"],
    name: "Grünes Haus",
    manufacturer: "Raspberry Pi",
    model: "Pico W",
    sw_version: "1.4.0",
  });
  assert.deepEqual(config.origin, { name: "sdk", sw_version: "0.9.0" });
  assert.equal(config.availability_mode, "all");
  assert.deepEqual(config.components.temp, {
    platform: "sensor",
    unique_id: "sdk_prj_a_dev_b_temp",
    default_entity_id: "sensor.grunes_haus_temp",
    name: "Temperature",
    state_topic: "home/sdk/prj_a/dev_b/temp/state",
    qos: 1,
    unit_of_measurement: "°C",
    device_class: "temperature",
    state_class: "measurement",
    suggested_display_precision: 1,
  });
  assert.equal(slug("Äpfel & Birnen!"), "apfel_birnen");
  const withUrl = deviceConfig(input([sensor], { publicUrl: "https://sdk.example" }), topics) as Record<
    string,
    any
  >;
  assert.equal(withUrl.device.configuration_url, "https://sdk.example/projects/prj_a/devices/dev_b");
  const removed = deviceConfig(input([]), topics, new Map([["temp", "sensor"]])) as Record<string, any>;
  assert.deepEqual(removed.components, { temp: { platform: "sensor" } }, "the documented removal form");
});

test("lights: colour modes and the brightness flag follow brightness and rgb", () => {
  const of = (e: EntityConfig) => componentOf(input([e]), e, topics);
  assert.deepEqual([of(light()).supported_color_modes, of(light()).brightness], [["onoff"], false]);
  assert.deepEqual(
    [of(light({ brightness: true })).supported_color_modes, of(light({ brightness: true })).brightness],
    [["brightness"], true],
  );
  assert.deepEqual(of(light({ rgb: true, brightness: true })).supported_color_modes, ["rgb"]);
  assert.equal(of(light()).schema, "json");
});

test("component mode: one config per entity with device, origin and availability; ids with a dot are left out", () => {
  const configs = componentConfigs(
    input([
      { id: "pump", kind: "switch", name: "Pump" },
      { id: "a.b", kind: "switch", name: "Dotted" },
    ]),
    topics,
  );
  assert.deepEqual([...configs.keys()], ["homeassistant/switch/dev_b/pump/config"]);
  const pump = configs.get("homeassistant/switch/dev_b/pump/config")!;
  assert.equal(pump.command_topic, "home/sdk/prj_a/dev_b/pump/set");
  assert.ok(!("platform" in pump) && "device" in pump && "origin" in pump && "availability" in pump);
});

test("states: per kind; lights carry color_mode; bad shapes say why", () => {
  assert.deepEqual(encodeState({ id: "t", kind: "sensor", name: "T" }, 21.5), { payload: "21.5" });
  assert.deepEqual(encodeState({ id: "t", kind: "sensor", name: "T" }, "idle"), { payload: "idle" });
  assert.deepEqual(encodeState({ id: "d", kind: "binary_sensor", name: "D" }, false), { payload: "OFF" });
  assert.deepEqual(encodeState({ id: "p", kind: "switch", name: "P" }, "ON"), { payload: "ON" });
  assert.match(
    (encodeState({ id: "p", kind: "switch", name: "P" }, "maybe") as { error: string }).error,
    /true\/false or "ON"\/"OFF"/,
  );
  const rgb = light({ brightness: true, rgb: true });
  assert.deepEqual(
    JSON.parse(
      (encodeState(rgb, { state: "ON", brightness: 10, color: { r: 1, g: 2, b: 3 } }) as { payload: string })
        .payload,
    ),
    {
      state: "ON",
      color_mode: "rgb",
      brightness: 10,
      color: { r: 1, g: 2, b: 3 },
    },
  );
  assert.deepEqual(JSON.parse((encodeState(light(), true) as { payload: string }).payload), {
    state: "ON",
    color_mode: "onoff",
  });
  assert.match((encodeState(rgb, { state: "ON", brightness: 300 }) as { error: string }).error, /0–255/);
});

test("commands: the HaCommand shape; undeclared attributes left out; malformed ones refused", () => {
  assert.deepEqual(decodeCommand({ id: "pump", kind: "switch", name: "P" }, "ON"), {
    type: "ha_command",
    entityId: "pump",
    kind: "switch",
    state: "ON",
  });
  assert.match(
    (decodeCommand({ id: "pump", kind: "switch", name: "P" }, "on") as { error: string }).error,
    /ON or OFF/,
  );
  const rgb = light({ brightness: true, rgb: true });
  assert.deepEqual(
    decodeCommand(rgb, '{"state":"ON","brightness":128,"color":{"r":255,"g":0,"b":0},"transition":2}'),
    {
      type: "ha_command",
      entityId: "led",
      kind: "light",
      state: "ON",
      brightness: 128,
      color: { r: 255, g: 0, b: 0 },
    },
  );
  assert.deepEqual(decodeCommand(light(), '{"state":"OFF","brightness":3}'), {
    type: "ha_command",
    entityId: "led",
    kind: "light",
    state: "OFF",
  });
  assert.match((decodeCommand(rgb, "nope") as { error: string }).error, /must be JSON/);
  assert.match((decodeCommand(rgb, '{"brightness":1}') as { error: string }).error, /needs "state"/);
  assert.match((decodeCommand(rgb, '{"state":"ON","color":{"r":999}}') as { error: string }).error, /color/);
  assert.match(
    (decodeCommand({ id: "t", kind: "sensor", name: "T" }, "ON") as { error: string }).error,
    /takes no commands/,
  );
});

test("entity names: a leading device name is cut (Home Assistant prefixes it itself); the device name alone is the main feature", () => {
  assert.equal(entityNameOf("Greenhouse temperature", "Greenhouse"), "temperature");
  assert.equal(entityNameOf("greenhouse - Fan", "Greenhouse"), "Fan");
  assert.equal(entityNameOf("Greenhouse", "greenhouse"), null);
  assert.equal(entityNameOf("Greenhouses count", "Greenhouse"), "Greenhouses count");
  assert.equal(entityNameOf("Temperature", "Greenhouse"), "Temperature");
  const config = componentOf(
    input([light({ name: "Grünes Haus Lampe" })]),
    light({ name: "Grünes Haus Lampe" }),
    topics,
  );
  assert.equal(config.name, "Lampe");
});
