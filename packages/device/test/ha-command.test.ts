import assert from "node:assert/strict";
import { test } from "node:test";
import { type DeviceMessage, type HaCommand, isHaCommand } from "../src/index.ts";

const valid: HaCommand[] = [
  { type: "ha_command", entityId: "led", kind: "switch", state: "ON" },
  { type: "ha_command", entityId: "relay-1", kind: "switch", state: "OFF" },
  { type: "ha_command", entityId: "strip", kind: "light", state: "OFF" },
  { type: "ha_command", entityId: "strip", kind: "light", state: "ON", brightness: 0 },
  { type: "ha_command", entityId: "strip", kind: "light", state: "ON", brightness: 255 },
  { type: "ha_command", entityId: "strip", kind: "light", state: "ON", color: { r: 255, g: 0, b: 12 } },
  {
    type: "ha_command",
    entityId: "S_2",
    kind: "light",
    state: "ON",
    brightness: 128,
    color: { r: 0, g: 0, b: 0 },
  },
];

test("isHaCommand accepts every shape a switch or light command takes", () => {
  for (const message of valid) assert.equal(isHaCommand(message), true, JSON.stringify(message));
});

test("isHaCommand refuses anything else", () => {
  const on = { type: "ha_command", entityId: "led", kind: "switch", state: "ON" };
  const light = { ...on, kind: "light" };
  const refused: [why: string, message: unknown][] = [
    ["null", null],
    ["a string", "ha_command"],
    ["an array", [on]],
    ["another type", { ...on, type: "gpio_change" }],
    ["no entityId", { ...on, entityId: undefined }],
    ["an entityId with a dot", { ...on, entityId: "temp.inside" }],
    ["an empty entityId", { ...on, entityId: "" }],
    ["a numeric entityId", { ...on, entityId: 7 }],
    ["a sensor kind", { ...on, kind: "sensor" }],
    ["a binary_sensor kind", { ...on, kind: "binary_sensor" }],
    ["no kind", { ...on, kind: undefined }],
    ["state in lower case", { ...on, state: "on" }],
    ["state true", { ...on, state: true }],
    ["state TOGGLE", { ...on, state: "TOGGLE" }],
    ["no state", { ...on, state: undefined }],
    ["brightness on a switch", { ...on, brightness: 10 }],
    ["color on a switch", { ...on, color: { r: 1, g: 2, b: 3 } }],
    ["brightness 256", { ...light, brightness: 256 }],
    ["brightness -1", { ...light, brightness: -1 }],
    ["brightness 1.5", { ...light, brightness: 1.5 }],
    ["brightness as text", { ...light, brightness: "128" }],
    ["brightness NaN", { ...light, brightness: Number.NaN }],
    ["color as an array", { ...light, color: [255, 0, 0] }],
    ["color null", { ...light, color: null }],
    ["color missing b", { ...light, color: { r: 1, g: 2 } }],
    ["color 256", { ...light, color: { r: 256, g: 0, b: 0 } }],
    ["color fractional", { ...light, color: { r: 0.5, g: 0, b: 0 } }],
    ["color negative", { ...light, color: { r: 0, g: -1, b: 0 } }],
  ];
  for (const [why, message] of refused) assert.equal(isHaCommand(message), false, why);
});

test("isHaCommand narrows an onMessage message to HaCommand", () => {
  const message: DeviceMessage = {
    type: "ha_command",
    entityId: "strip",
    kind: "light",
    state: "ON",
    brightness: 9,
  };
  if (!isHaCommand(message)) assert.fail("a light command");
  const brightness: number | undefined = message.brightness;
  const kind: "switch" | "light" = message.kind;
  assert.deepEqual([kind, brightness], ["light", 9]);
});
