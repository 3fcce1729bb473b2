import assert from "node:assert/strict";
import fs from "node:fs";
import { describe, test } from "node:test";
import { binarySensorDeviceClasses, sensorDeviceClassUnits } from "@sdk/protocol/hardware";
import {
  boardPins,
  ConfigError,
  Device,
  type DeviceBridge,
  type DeviceId,
  type DeviceMessage,
  DeviceScript,
  defineConfig,
  type EntityConfig,
  GP0,
  GP22,
  GP26,
  libraryVersion,
  OnboardLED,
  type ProjectConfig,
  type ProjectId,
  type ScriptContext,
} from "../src/index.ts";

const projectId = "prj_abcdefghijklmnopqrs2";

describe("defineConfig", () => {
  test("valid configs pass through unchanged", () => {
    const minimal: ProjectConfig = { board: "pico_w" };
    assert.equal(defineConfig(minimal), minimal);
    assert.deepEqual(defineConfig({ board: "pico2_w" }), { board: "pico2_w" });

    const full: ProjectConfig = {
      project: projectId,
      board: "pico2_w",
      entry: "src/main.ts",
      ha: {
        entities: [
          {
            id: "temperature",
            kind: "sensor",
            name: "Temperature",
            unit: "°C",
            deviceClass: "temperature",
            icon: "mdi:thermometer",
            stateClass: "measurement",
          },
          { id: "energy_total", kind: "sensor", name: "Energy", unit: "kWh", stateClass: "total_increasing" },
          { id: "free", kind: "sensor", name: "Free", unit: "things", displayPrecision: 0 },
          { id: "ph", kind: "sensor", name: "pH", deviceClass: "ph", displayPrecision: 10 },
          { id: "door", kind: "binary_sensor", name: "Door", deviceClass: "door" },
          { id: "button", kind: "binary_sensor", name: "Button" },
          { id: "relay-1", kind: "switch", name: "Relay", icon: "mdi:power" },
          { id: "LED_strip", kind: "light", name: "x".repeat(100), brightness: true, rgb: false },
        ],
      },
    };
    const snapshot = structuredClone(full);
    assert.equal(defineConfig(full), full);
    assert.deepEqual(full, snapshot, "defineConfig does not change the config");

    for (const entry of ["src/index.ts", "main.js", "lib/app.mts", "x.mjs"]) {
      assert.equal(defineConfig({ board: "pico_w", entry }).entry, entry);
    }
    assert.ok(defineConfig({ board: "pico_w", ha: {} }));
    assert.ok(defineConfig({ board: "pico_w", ha: { entities: [] } }));
    assert.ok(defineConfig({ board: "pico_w", project: "prj_2345672345672345672z" }));
  });

  const invalid: [what: string, config: unknown, field: string, message: RegExp][] = [
    ["not an object", null, "(config)", /must be an object/],
    ["a string", "pico_w", "(config)", /must be an object/],
    ["no board", {}, "board", /must be "pico_w" or "pico2_w" \(got undefined\)/],
    ["unknown board", { board: "pico" }, "board", /\(got "pico"\)/],
    ["board in capitals", { board: "PICO_W" }, "board", /"PICO_W"/],
    ["Pico 2 without W", { board: "pico2" }, "board", /"pico2"/],
    ["project not an id", { board: "pico_w", project: "my-project" }, "project", /prj_/],
    ["project id too short", { board: "pico_w", project: "prj_abc" }, "project", /"prj_abc"/],
    ["project id with capitals", { board: "pico_w", project: "prj_ABCDEFGHIJKLMNOPQRST" }, "project", /prj_/],
    ["project a number", { board: "pico_w", project: 42 }, "project", /42/],
    ["entry not a script", { board: "pico_w", entry: "src/index.py" }, "entry", /\.ts or \.js/],
    ["entry a number", { board: "pico_w", entry: 42 }, "entry", /42/],
    ["entities not an array", { board: "pico_w", ha: { entities: {} } }, "ha.entities", /must be an array/],
    ["entity null", { board: "pico_w", ha: { entities: [null] } }, "ha.entities[0]", /must be an object/],
  ];
  const entity = (e: Record<string, unknown>, before: unknown[] = []) => ({
    board: "pico_w",
    ha: { entities: [...before, { id: "t", kind: "sensor", name: "T", ...e }] },
  });
  const ok = { id: "a", kind: "sensor", name: "A" };
  invalid.push(
    ["entity id missing", entity({ id: undefined }), "ha.entities[0].id", /got undefined/],
    ["entity id empty", entity({ id: "" }), "ha.entities[0].id", /1–64 letters/],
    ["entity id with a space", entity({ id: "my temp" }), "ha.entities[0].id", /"my temp"/],
    ["entity id too long", entity({ id: "x".repeat(65) }), "ha.entities[0].id", /1–64/],
    ["entity id a number", entity({ id: 1 }), "ha.entities[0].id", /got 1\)/],
    [
      "entity id with a dot",
      entity({ id: "temp.inside" }),
      "ha.entities[0].id",
      /^sdk\.ts: ha\.entities\[0\]\.id "temp\.inside" contains "\.", which Home Assistant's MQTT discovery topics .* "temp_inside"/,
    ],
    ["duplicate entity id", entity({ id: "a" }, [ok]), "ha.entities[1].id", /repeats "a"/],
    [
      "kind missing",
      entity({ kind: undefined }, [ok]),
      "ha.entities[1].kind",
      /sensor, binary_sensor, switch, light/,
    ],
    ["kind unknown", entity({ kind: "number" }), "ha.entities[0].kind", /"number"/],
    ["name missing", entity({ name: undefined }), "ha.entities[0].name", /non-empty/],
    ["name empty", entity({ name: "" }), "ha.entities[0].name", /non-empty/],
    ["name blank", entity({ name: "   " }), "ha.entities[0].name", /non-empty/],
    ["name too long", entity({ name: "x".repeat(101) }), "ha.entities[0].name", /at most 100/],
    ["unit a number", entity({ unit: 5 }), "ha.entities[0].unit", /string of at most 64/],
    ["unit too long", entity({ unit: "u".repeat(65) }), "ha.entities[0].unit", /at most 64/],
    ["unit blank", entity({ unit: " " }), "ha.entities[0].unit", /non-blank/],
    [
      "deviceClass a number",
      entity({ deviceClass: 1 }),
      "ha.entities[0].deviceClass",
      /not a sensor device class \(got 1\)/,
    ],
    ["icon too long", entity({ icon: `mdi:${"i".repeat(61)}` }), "ha.entities[0].icon", /prefix:name/],
    ["icon without a prefix", entity({ icon: "thermometer" }), "ha.entities[0].icon", /"mdi:thermometer"/],
    [
      "stateClass unknown",
      entity({ stateClass: "average" }),
      "ha.entities[0].stateClass",
      /measurement, total/,
    ],
    [
      "displayPrecision negative",
      entity({ displayPrecision: -1 }),
      "ha.entities[0].displayPrecision",
      /0 to 10/,
    ],
    ["displayPrecision 11", entity({ displayPrecision: 11 }), "ha.entities[0].displayPrecision", /0 to 10/],
    [
      "displayPrecision 1.5",
      entity({ displayPrecision: 1.5 }),
      "ha.entities[0].displayPrecision",
      /whole number/,
    ],
    // A sensor's unit against Home Assistant's table for its device class.
    [
      "temperature in C",
      entity({ deviceClass: "temperature", unit: "C" }),
      "ha.entities[0].unit",
      /"C" is not valid with deviceClass "temperature": Home Assistant \(2025\.7 and later\) rejects the entity; use one of "°C", "°F", "K"/,
    ],
    ["humidity in ‰", entity({ deviceClass: "humidity", unit: "‰" }), "ha.entities[0].unit", /"%"/],
    ["power in w", entity({ deviceClass: "power", unit: "w" }), "ha.entities[0].unit", /"W", "kW"/],
    [
      "temperature without unit",
      entity({ deviceClass: "temperature" }),
      "ha.entities[0].unit",
      /is needed with deviceClass "temperature"/,
    ],
    [
      "aqi with a unit",
      entity({ deviceClass: "aqi", unit: "AQI" }),
      "ha.entities[0].unit",
      /must be left out/,
    ],
    [
      "unknown sensor class",
      entity({ deviceClass: "temprature" }),
      "ha.entities[0].deviceClass",
      /sensor device classes: apparent_power/,
    ],
    ["enum sensor", entity({ deviceClass: "enum" }), "ha.entities[0].deviceClass", /options/],
    [
      "a binary class on a sensor",
      entity({ deviceClass: "door" }),
      "ha.entities[0].deviceClass",
      /kind "binary_sensor"/,
    ],
    [
      "timestamp with a unit",
      entity({ deviceClass: "timestamp", unit: "s" }),
      "ha.entities[0].unit",
      /not a number/,
    ],
    [
      "timestamp with a state class",
      entity({ deviceClass: "timestamp", stateClass: "measurement" }),
      "ha.entities[0].stateClass",
      /not a number/,
    ],
    // Fields that belong to other kinds.
    [
      "unit on a switch",
      entity({ kind: "switch", unit: "W" }),
      "ha.entities[0].unit",
      /does not belong to a switch: only sensor entities have unit/,
    ],
    [
      "unit on a light",
      entity({ kind: "light", unit: "%" }, [ok]),
      "ha.entities[1].unit",
      /does not belong to a light/,
    ],
    [
      "stateClass on a binary_sensor",
      entity({ kind: "binary_sensor", stateClass: "measurement" }),
      "ha.entities[0].stateClass",
      /does not belong to a binary_sensor/,
    ],
    [
      "deviceClass on a switch",
      entity({ kind: "switch", deviceClass: "outlet" }),
      "ha.entities[0].deviceClass",
      /only sensor and binary_sensor entities have deviceClass/,
    ],
    [
      "brightness on a switch",
      entity({ kind: "switch", brightness: true }),
      "ha.entities[0].brightness",
      /only light entities have brightness \(a switch takes id, kind, name, icon\)/,
    ],
    ["rgb on a sensor", entity({ rgb: true }), "ha.entities[0].rgb", /does not belong to a sensor/],
    [
      "displayPrecision on a light",
      entity({ kind: "light", displayPrecision: 1 }),
      "ha.entities[0].displayPrecision",
      /does not belong to a light/,
    ],
    [
      "an unknown field",
      entity({ units: "W" }),
      "ha.entities[0].units",
      /is not a field of ha\.entities \(a sensor takes id, kind, name, icon, unit, deviceClass, stateClass, displayPrecision\)/,
    ],
    // Per kind.
    [
      "binary_sensor class unknown",
      entity({ kind: "binary_sensor", deviceClass: "button" }),
      "ha.entities[0].deviceClass",
      /binary sensor device classes: battery, .*window \(got "button"\)/,
    ],
    [
      "brightness not a boolean",
      entity({ kind: "light", brightness: 255 }),
      "ha.entities[0].brightness",
      /true or false \(got 255\)/,
    ],
    ["rgb not a boolean", entity({ kind: "light", rgb: "yes" }), "ha.entities[0].rgb", /true or false/],
    [
      "too many entities",
      { board: "pico_w", ha: { entities: Array.from({ length: 201 }, (_, i) => ({ ...ok, id: `e${i}` })) } },
      "ha.entities",
      /at most 200/,
    ],
  );

  for (const [what, config, field, message] of invalid) {
    test(`throws ConfigError naming the field: ${what}`, () => {
      assert.throws(
        () => defineConfig(config as ProjectConfig),
        (error: unknown) => {
          assert.ok(error instanceof ConfigError, `expected ConfigError, got ${String(error)}`);
          assert.equal(error.name, "ConfigError");
          assert.equal(error.field, field);
          assert.ok(
            error.message.startsWith(`sdk.ts: ${field} `),
            `message names the field: ${error.message}`,
          );
          assert.match(error.message, message);
          return true;
        },
      );
    });
  }

  test("every unit of Home Assistant's table passes with its device class, and the error carries the entity id", () => {
    for (const [deviceClass, units] of Object.entries(sensorDeviceClassUnits))
      for (const unit of units) {
        const e = { id: "s", kind: "sensor", name: "S", deviceClass, ...(unit === null ? {} : { unit }) };
        assert.ok(
          defineConfig({ board: "pico_w", ha: { entities: [e as EntityConfig] } }),
          `${deviceClass} ${unit}`,
        );
      }
    for (const deviceClass of binarySensorDeviceClasses)
      assert.ok(
        defineConfig({
          board: "pico_w",
          ha: { entities: [{ id: "b", kind: "binary_sensor", name: "B", deviceClass }] },
        }),
      );
    assert.throws(
      () => defineConfig(entity({ id: "temp.inside" }, [ok]) as ProjectConfig),
      (e: unknown) => e instanceof ConfigError && e.entityId === "temp.inside",
    );
  });
});

describe("DeviceScript", () => {
  const bridge = (): DeviceBridge & { types: string[] } => {
    const types: string[] = [];
    return {
      types,
      command(type) {
        types.push(type);
        return Promise.resolve({ value: 1 });
      },
      emitState() {},
      send() {},
    };
  };

  test("subclasses get env, deviceId and projectId from the context", async () => {
    const b = bridge();
    const device = new Device("pico2_w", b);
    const env = Object.defineProperty({ API_KEY: "secret", INTERVAL: "500" }, "DEVICE", {
      value: device,
      enumerable: false,
    }) as ScriptContext<{ API_KEY: string; INTERVAL: string }>["env"];

    const seen: DeviceMessage[] = [];
    class Blink extends DeviceScript<{ API_KEY: string; INTERVAL: string }> {
      readonly interval = Number(this.env.INTERVAL);
      override async onDeviceConnect() {
        await this.env.DEVICE.gpioToggle(OnboardLED);
      }
      override onMessage(message: DeviceMessage) {
        seen.push(message);
      }
    }
    const script = new Blink({
      env,
      deviceId: "dev_aaaaaaaaaaaaaaaaaaaa" as DeviceId,
      projectId: projectId as ProjectId,
    });
    assert.ok(script instanceof DeviceScript);
    assert.equal(script.env, env);
    assert.equal(script.env.API_KEY, "secret");
    assert.equal(script.interval, 500, "env is there before field initialisers run");
    assert.equal(script.env.DEVICE, device);
    assert.equal(script.env.DEVICE.board, "pico2_w");
    assert.equal(script.deviceId, "dev_aaaaaaaaaaaaaaaaaaaa");
    assert.equal(script.projectId, projectId);
    await script.onDeviceConnect();
    script.onMessage({ type: "gpio_change", pin: 3, value: 1 });
    assert.deepEqual(b.types, ["gpio_toggle"]);
    assert.deepEqual(seen, [{ type: "gpio_change", pin: 3, value: 1 }]);
  });

  test("handlers are optional", () => {
    class Empty extends DeviceScript {}
    const script = new Empty({
      env: { DEVICE: new Device("pico_w", bridge()) } as ScriptContext["env"],
      deviceId: "dev_x" as DeviceId,
      projectId: "prj_x" as ProjectId,
    });
    assert.equal(script.onDeviceConnect, undefined);
    assert.equal(script.onMessage, undefined);
    assert.equal(script.onDeviceDisconnect, undefined);
  });
});

describe("pins and library exports", () => {
  test("pin constants, the onboard LED and the board tables", () => {
    assert.equal(GP0, 0);
    assert.equal(GP22, 22);
    assert.equal(GP26, 26);
    assert.equal(OnboardLED, "LED");
    assert.deepEqual(Object.keys(boardPins).sort(), ["pico2_w", "pico_w"]);
    for (const board of Object.values(boardPins)) {
      assert.deepEqual([...board.gpios], [...Array.from({ length: 23 }, (_, i) => i), 26, 27, 28]);
      assert.deepEqual([...board.adcPins], [26, 27, 28]);
    }
  });

  test("libraryVersion matches the package version (the build records the package's)", () => {
    const pkg = JSON.parse(fs.readFileSync(new URL("../package.json", import.meta.url), "utf8"));
    assert.equal(libraryVersion, pkg.version);
  });
});
