import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  binarySensorDeviceClasses,
  CreateDeploymentBody,
  DeploymentManifest,
  EntityConfigSchema,
  entitiesProblems,
  entityProblems,
  haCommandProblem,
  StoredDeploymentManifest,
  sensorDeviceClasses,
  sensorDeviceClassUnits,
} from "../src/index.ts";

const manifest = (entities: unknown[]) => ({ board: "pico_w", libraryVersion: "0.1.0", entities });
const issues = (entities: unknown[]) => {
  const parsed = DeploymentManifest.safeParse(manifest(entities));
  return parsed.success ? [] : parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
};

describe("the manifest schema applies the ha.entities rules", () => {
  test("valid entities of every kind pass", () => {
    const entities = [
      {
        id: "temperature",
        kind: "sensor",
        name: "Temperature",
        unit: "°C",
        deviceClass: "temperature",
        stateClass: "measurement",
        displayPrecision: 1,
        icon: "mdi:thermometer",
      },
      { id: "count", kind: "sensor", name: "Count" },
      { id: "door", kind: "binary_sensor", name: "Door", deviceClass: "door" },
      { id: "led", kind: "switch", name: "LED" },
      { id: "strip", kind: "light", name: "Strip", brightness: true, rgb: true },
    ];
    assert.deepEqual(issues(entities), []);
    assert.ok(CreateDeploymentBody.safeParse({ bundle: "x", manifest: manifest(entities) }).success);
  });

  test("each rule is refused with one message naming the field", () => {
    const cases: [entity: Record<string, unknown>, expected: RegExp][] = [
      [{ id: "temp.inside", kind: "sensor", name: "T" }, /^entities\.0\.id: "temp\.inside" contains "\."/],
      [{ id: "a b", kind: "sensor", name: "T" }, /^entities\.0\.id: must be 1–64 letters, digits, _ or -/],
      [
        { id: "t", kind: "sensor", name: "T", deviceClass: "temperature", unit: "C" },
        /^entities\.0\.unit: "C" is not valid with deviceClass "temperature"/,
      ],
      [
        { id: "t", kind: "sensor", name: "T", deviceClass: "humidity" },
        /^entities\.0\.unit: is needed with deviceClass "humidity": one of "%"/,
      ],
      [
        { id: "t", kind: "sensor", name: "T", deviceClass: "nope" },
        /^entities\.0\.deviceClass: is not a sensor device class/,
      ],
      [
        { id: "t", kind: "binary_sensor", name: "T", deviceClass: "temperature" },
        /^entities\.0\.deviceClass: must be one of Home Assistant's binary sensor device classes/,
      ],
      [{ id: "t", kind: "switch", name: "T", unit: "W" }, /^entities\.0\.unit: does not belong to a switch/],
      [
        { id: "t", kind: "switch", name: "T", brightness: true },
        /^entities\.0\.brightness: does not belong to a switch: only light entities have brightness/,
      ],
      [
        { id: "t", kind: "binary_sensor", name: "T", stateClass: "measurement" },
        /^entities\.0\.stateClass: does not belong to a binary_sensor/,
      ],
      [
        { id: "t", kind: "sensor", name: "T", icon: "thermometer" },
        /^entities\.0\.icon: must be a Home Assistant icon/,
      ],
      [{ id: "t", kind: "sensor", name: "T", displayPrecision: 11 }, /^entities\.0\.displayPrecision: /],
      [{ id: "t", kind: "lock", name: "T" }, /^entities\.0\.kind: /],
    ];
    for (const [entity, expected] of cases) {
      const found = issues([entity]);
      assert.equal(found.length, 1, `one issue for ${JSON.stringify(entity)}: ${found.join("; ")}`);
      assert.match(found[0]!, expected);
    }
  });

  test("repeated ids are refused", () => {
    const led = { id: "led", kind: "switch", name: "LED" };
    assert.deepEqual(issues([led, led]), ['entities.1.id: repeats "led"']);
  });

  test("stored deployments made before the rules still read", () => {
    const old = manifest([
      { id: "temp.inside", kind: "sensor", name: "T", unit: "C", deviceClass: "temperature" },
      { id: "relay", kind: "switch", name: "Relay", unit: "W" },
    ]);
    assert.equal(DeploymentManifest.safeParse(old).success, false);
    assert.equal(StoredDeploymentManifest.parse(old).entities.length, 2);
    assert.equal(EntityConfigSchema.safeParse(old.entities[0]).success, false);
  });
});

describe("the plain-data rules", () => {
  test("the device class tables are Home Assistant's spelling", () => {
    assert.deepEqual(sensorDeviceClassUnits.temperature, ["°C", "°F", "K"]);
    assert.ok(sensorDeviceClassUnits.volume_flow_rate!.includes("L/min"));
    assert.ok(sensorDeviceClassUnits.duration!.includes("min"));
    assert.ok(!sensorDeviceClasses.includes("enum"));
    assert.ok(sensorDeviceClasses.includes("monetary"));
    assert.equal(binarySensorDeviceClasses.length, 28);
    assert.deepEqual(
      entityProblems({ id: "price", kind: "sensor", name: "Price", deviceClass: "monetary", unit: "EUR" }),
      [],
    );
  });

  test("entitiesProblems reports every problem with its position", () => {
    assert.deepEqual(
      entitiesProblems([{ id: "a.b", kind: "switch", name: "" }]).map((p) => p.field),
      ["[0].id", "[0].name"],
    );
    assert.deepEqual(entitiesProblems("x"), [{ field: "", message: "must be an array" }]);
  });

  test("haCommandProblem says what is wrong", () => {
    assert.equal(
      haCommandProblem({ type: "ha_command", entityId: "led", kind: "switch", state: "ON" }),
      null,
    );
    assert.match(
      haCommandProblem({ type: "ha_command", entityId: "led", kind: "switch", state: "on" })!,
      /state must be "ON" or "OFF" \(got "on"\)/,
    );
    assert.match(
      haCommandProblem({ type: "ha_command", entityId: "s", kind: "light", state: "ON", brightness: 300 })!,
      /brightness must be an integer from 0 to 255 \(got 300\)/,
    );
  });
});
