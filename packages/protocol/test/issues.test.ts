import assert from "node:assert/strict";
import { test } from "node:test";
import { CreateDeviceBody, commandSchemas, describeIssues } from "../src/index.ts";

const fields = (schema: { safeParse(v: unknown): any }, value: unknown) =>
  describeIssues(schema.safeParse(value).error.issues, "body");

test("each bad field is named once, with the values it accepts", () => {
  assert.deepEqual(fields(commandSchemas.i2c_read, { bus: 0, address: 1e20, length: 1.5 }), [
    { path: "address", message: "must be an integer from 8 to 119 (got 100000000000000000000)" },
    { path: "length", message: "must be an integer from 1 to 4096 (got 1.5)" },
  ]);
  assert.deepEqual(fields(commandSchemas.gpio_write, { pin: 2, value: -1 }), [
    { path: "value", message: "must be one of 0, 1 (got -1)" },
  ]);
  assert.match(
    fields(commandSchemas.pwm, { pin: 2, frequency: -1, duty: 0 })[0]!.message,
    /^must be a number from 8 to/,
  );
  assert.deepEqual(fields(commandSchemas.pin_mode, { pin: 2, mode: "x" }), [
    { path: "mode", message: 'must be one of input, output (got "x")' },
  ]);
  assert.deepEqual(fields(CreateDeviceBody, { name: "x", board: "x" }), [
    { path: "board", message: 'must be one of "pico_w", "pico2_w"' },
  ]);
  assert.deepEqual(fields(CreateDeviceBody, {}), [
    { path: "name", message: "is required" },
    { path: "board", message: 'must be one of "pico_w", "pico2_w"' },
  ]);
});
