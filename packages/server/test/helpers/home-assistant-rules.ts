// Home Assistant's discovery rules as HOME_ASSISTANT.md documents them (checked against HA's
// source), written here independently of the bridge so that the tests judge it, not echo it.
import assert from "node:assert/strict";

type Json = Record<string, unknown>;

const platforms = ["sensor", "binary_sensor", "switch", "light"];
/** MQTT_ENTITY_DEVICE_INFO_SCHEMA: any other key fails the whole config. */
const deviceKeys = [
  "identifiers",
  "connections",
  "name",
  "manufacturer",
  "model",
  "model_id",
  "serial_number",
  "sw_version",
  "hw_version",
  "suggested_area",
  "configuration_url",
  "via_device",
];
const originKeys = ["name", "sw_version", "support_url"];
const availabilityKeys = ["topic", "payload_available", "payload_not_available", "value_template"];
const stateClasses = ["measurement", "total", "total_increasing", "measurement_angle"];
/** DEVICE_CLASS_UNITS, the classes these tests use. */
const unitsOf: Record<string, string[]> = {
  temperature: ["°C", "°F", "K"],
  humidity: ["%"],
  battery: ["%"],
  illuminance: ["lx"],
  voltage: ["V", "mV", "µV", "kV", "MV"],
};
const colorModes = ["onoff", "brightness", "color_temp", "hs", "xy", "rgb", "rgbw", "rgbww", "white"];
/** Removed in 2025.3 (JSON lights) and 2026.4 (object_id). */
const removedKeys = ["object_id", "obj_id", "color_mode", "hs", "rgb", "xy", "color_temp"];
const discoveryTopic = /^(?<component>\w+)\/(?:(?<node>[a-zA-Z0-9_-]+)\/)?(?<object>[a-zA-Z0-9_-]+)\/config$/;

function strict(block: unknown, allowed: string[], what: string) {
  assert.ok(block && typeof block === "object" && !Array.isArray(block), `${what} must be an object`);
  for (const key of Object.keys(block))
    assert.ok(allowed.includes(key), `extra keys not allowed @ ${what}['${key}']`);
}

function checkAvailability(config: Json, where: string) {
  assert.ok(
    !("availability_topic" in config && "availability" in config),
    `${where}: both availability forms`,
  );
  const list = config.availability as Json[];
  assert.ok(
    Array.isArray(list) && list.length >= 2,
    `${where}: availability lists the server and the device`,
  );
  for (const item of list) {
    strict(item, availabilityKeys, `${where}.availability[]`);
    assert.equal(typeof item.topic, "string", `${where}: availability topic`);
  }
  assert.equal(config.availability_mode, "all", `${where}: entities need the server AND the board`);
}

/** One entity's config (a device config's component, or a single-component payload). */
function checkEntity(platform: string, c: Json, where: string, uniqueIds: Map<string, string>) {
  assert.ok(platforms.includes(platform), `${where}: unsupported platform ${platform}`);
  for (const key of removedKeys) assert.ok(!(key in c), `${where}: ${key} is no longer accepted`);
  assert.equal(typeof c.unique_id, "string", `${where}: unique_id is required in device discovery`);
  const owner = uniqueIds.get(c.unique_id as string);
  assert.ok(
    owner === undefined || owner === where,
    `${where}: unique_id ${c.unique_id} also used by ${owner}`,
  );
  uniqueIds.set(c.unique_id as string, where);
  if (c.default_entity_id !== undefined) {
    const [domain, id] = String(c.default_entity_id).split(/\.(.*)/s);
    assert.equal(domain, platform, `${where}: default_entity_id must be "<domain>.<object_id>"`);
    assert.match(id ?? "", /^[a-z0-9_]+$/, `${where}: default_entity_id's object id`);
  }
  if (c.icon !== undefined)
    assert.match(String(c.icon), /^[a-z0-9-]+:[a-z0-9-]+$/, `${where}: icon prefix:name`);
  if (c.qos !== undefined) assert.ok([0, 1, 2].includes(c.qos as number), `${where}: qos`);
  switch (platform) {
    case "sensor": {
      assert.equal(typeof c.state_topic, "string", `${where}: a sensor needs state_topic`);
      if (c.state_class !== undefined)
        assert.ok(stateClasses.includes(c.state_class as string), `${where}: state_class`);
      if (c.suggested_display_precision !== undefined)
        assert.ok(
          Number.isInteger(c.suggested_display_precision) && (c.suggested_display_precision as number) >= 0,
        );
      const units = unitsOf[c.device_class as string];
      if (units && c.unit_of_measurement !== undefined)
        assert.ok(
          units.includes(c.unit_of_measurement as string),
          `${where}: unit not valid with device class`,
        );
      break;
    }
    case "binary_sensor":
      assert.equal(typeof c.state_topic, "string", `${where}: a binary_sensor needs state_topic`);
      break;
    case "switch":
      assert.equal(typeof c.command_topic, "string", `${where}: a switch needs command_topic`);
      break;
    case "light": {
      assert.equal(c.schema, "json", `${where}: JSON schema light`);
      assert.equal(typeof c.command_topic, "string", `${where}: a light needs command_topic`);
      const modes = c.supported_color_modes as string[];
      assert.ok(Array.isArray(modes) && modes.length > 0, `${where}: supported_color_modes`);
      for (const m of modes) assert.ok(colorModes.includes(m), `${where}: colour mode ${m}`);
      if (modes.includes("onoff") || modes.includes("brightness"))
        assert.equal(modes.length, 1, `${where}: onoff and brightness only alone`);
      if (c.brightness !== undefined)
        assert.equal(typeof c.brightness, "boolean", `${where}: brightness flag`);
      // With brightness false HA scales r/g/b itself and drops the brightness of colour commands.
      if (modes.some((m) => ["rgb", "rgbw", "rgbww"].includes(m)))
        assert.equal(c.brightness, true, `${where}: an rgb light declares brightness: true`);
      break;
    }
  }
}

/** The device block (strict; identifiers and name) and the origin block (strict; name required). */
function checkDeviceAndOrigin(config: Json, topic: string) {
  strict(config.device, deviceKeys, `${topic}.device`);
  const device = config.device as Json;
  const ids = device.identifiers as string[] | undefined;
  assert.ok(
    Array.isArray(ids) && ids.length > 0 && ids.every((i) => typeof i === "string" && i),
    `${topic}: device identifiers`,
  );
  assert.ok(typeof device.name === "string" && device.name !== "", `${topic}: the device name is sent`);
  if (device.configuration_url !== undefined)
    assert.match(String(device.configuration_url), /^(https?|homeassistant):\/\//);
  strict(config.origin, originKeys, `${topic}.origin`);
  const origin = config.origin as Json;
  assert.ok(typeof origin.name === "string" && origin.name !== "", `${topic}: origin.name is required`);
}

/** A device-based discovery config (`<prefix>/device/<id>/config`), as DEVICE_DISCOVERY_SCHEMA checks it. */
export function checkDeviceConfig(
  topic: string,
  prefix: string,
  config: Json,
  uniqueIds: Map<string, string>,
) {
  assert.match(topic.slice(prefix.length + 1), discoveryTopic, `illegal discovery topic ${topic}`);
  for (const key of ["device", "origin", "components"])
    assert.ok(key in config, `${topic}: ${key} is required`);
  checkDeviceAndOrigin(config, topic);
  checkAvailability(config, topic);
  for (const [key, component] of Object.entries(config.components as Record<string, Json>)) {
    assert.match(key, /^[a-zA-Z0-9_-]+$/, `${topic}: component key`);
    const platform = component.platform as string;
    assert.ok(platforms.includes(platform), `${topic}.${key}: platform`);
    if (Object.keys(component).length === 1) continue; // the documented removal form
    checkEntity(platform, component, `${topic}#${key}`, uniqueIds);
    for (const key2 of Object.keys(component))
      assert.ok(!["device", "origin"].includes(key2), "not per component");
  }
}

/** A single-component config (`<prefix>/<platform>/<node>/<object>/config`). */
export function checkComponentConfig(
  topic: string,
  prefix: string,
  config: Json,
  uniqueIds: Map<string, string>,
) {
  const m = discoveryTopic.exec(topic.slice(prefix.length + 1));
  assert.ok(m, `illegal discovery topic ${topic}`);
  checkDeviceAndOrigin(config, topic);
  checkAvailability(config, topic);
  checkEntity(m.groups!.component!, config, topic, uniqueIds);
}

/**
 * A payload on an entity's state_topic, as its platform reads it: binary sensors and switches
 * ON/OFF (or None for unknown); JSON lights an object whose state is ON/OFF/null, with a colour
 * only next to a `color_mode` the light supports; numeric sensors a number or None.
 */
export function checkStatePayload(entity: Json, payload: string, where: string) {
  switch (entity.platform) {
    case "binary_sensor":
    case "switch":
      assert.ok(["ON", "OFF", "None"].includes(payload), `${where}: ${entity.platform} state ${payload}`);
      return;
    case "light": {
      const state = JSON.parse(payload) as Json;
      assert.ok(["ON", "OFF", null].includes(state.state as string | null), `${where}: light state`);
      if (state.color !== undefined) {
        assert.ok(
          (entity.supported_color_modes as string[]).includes(state.color_mode as string),
          `${where}: a colour is read only with a supported color_mode (got ${state.color_mode})`,
        );
        const c = state.color as Json;
        for (const k of ["r", "g", "b"]) assert.ok(Number.isInteger(c[k]), `${where}: color.${k}`);
      }
      if (state.brightness !== undefined)
        assert.ok(Number.isInteger(state.brightness), `${where}: brightness is an integer`);
      return;
    }
    case "sensor": {
      const numeric = [
        "device_class",
        "state_class",
        "unit_of_measurement",
        "suggested_display_precision",
      ].some((k) => entity[k] !== undefined);
      if (numeric)
        assert.ok(
          payload === "None" || Number.isFinite(Number(payload)),
          `${where}: a numeric sensor's state`,
        );
    }
  }
}
