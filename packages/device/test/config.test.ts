import assert from "node:assert/strict";
import fs from "node:fs";
import { describe, test } from "node:test";
import {
  boardPins,
  ConfigError,
  Device,
  type DeviceBridge,
  type DeviceId,
  type DeviceMessage,
  DeviceScript,
  defineConfig,
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
          { id: "energy.total", kind: "sensor", name: "Energy", unit: "kWh", stateClass: "total_increasing" },
          { id: "relay-1", kind: "switch", name: "Relay", icon: "mdi:power" },
          { id: "LED_strip", kind: "light", name: "x".repeat(100), deviceClass: "light" },
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
    ["duplicate entity id", entity({ id: "a" }, [ok]), "ha.entities[1].id", /repeats "a"/],
    ["kind missing", entity({ kind: undefined }, [ok]), "ha.entities[1].kind", /sensor, switch, light/],
    ["kind unknown", entity({ kind: "number" }), "ha.entities[0].kind", /"number"/],
    ["name missing", entity({ name: undefined }), "ha.entities[0].name", /non-empty/],
    ["name empty", entity({ name: "" }), "ha.entities[0].name", /non-empty/],
    ["name blank", entity({ name: "   " }), "ha.entities[0].name", /non-empty/],
    ["name too long", entity({ name: "x".repeat(101) }), "ha.entities[0].name", /at most 100/],
    ["unit a number", entity({ unit: 5 }), "ha.entities[0].unit", /string of at most 64/],
    ["unit too long", entity({ unit: "u".repeat(65) }), "ha.entities[0].unit", /at most 64/],
    ["deviceClass a number", entity({ deviceClass: 1 }), "ha.entities[0].deviceClass", /string/],
    ["icon too long", entity({ icon: "i".repeat(65) }), "ha.entities[0].icon", /at most 64/],
    [
      "stateClass unknown",
      entity({ stateClass: "average" }),
      "ha.entities[0].stateClass",
      /measurement, total/,
    ],
    ["unit on a switch", entity({ kind: "switch", unit: "W" }), "ha.entities[0]", /a switch has no unit/],
    ["unit on a light", entity({ kind: "light", unit: "%" }, [ok]), "ha.entities[1]", /a light has no unit/],
    [
      "stateClass on a switch",
      entity({ kind: "switch", stateClass: "measurement" }),
      "ha.entities[0]",
      /stateClass \(only sensors do\)/,
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

  test("the message of a unit on a switch names the unit", () => {
    assert.throws(
      () => defineConfig(entity({ kind: "switch", unit: "W" }) as ProjectConfig),
      /^ConfigError: sdk\.ts: ha\.entities\[0\] a switch has no unit or stateClass \(only sensors do\)$/,
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
