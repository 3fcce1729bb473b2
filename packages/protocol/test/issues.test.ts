import assert from "node:assert/strict";
import { test } from "node:test";
import {
  CreateDeviceBody,
  commandSchemas,
  describeIssues,
  deviceMessageSchemas,
  endpoints,
} from "../src/index.ts";

const fields = (schema: { safeParse(v: unknown): any }, value: unknown) =>
  describeIssues(schema.safeParse(value).error.issues, "body", value);

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
    { path: "board", message: "is required" },
  ]);
});

test("a missing field reads 'is required' in every schema, whatever its type (enum, literal, union…)", () => {
  const schemas: [string, { safeParse(v: unknown): any }][] = [
    ...Object.entries(commandSchemas).map(([name, s]) => [`command ${name}`, s] as [string, any]),
    ...Object.entries(deviceMessageSchemas).map(
      ([name, s]) => [`device message ${name}`, s] as [string, any],
    ),
    ...Object.entries(endpoints).flatMap(([name, e]) =>
      "body" in e && e.body && !("binary" in e) ? [[`${name} body`, e.body] as [string, any]] : [],
    ),
  ];
  let missing = 0;
  for (const [name, schema] of schemas) {
    const result = schema.safeParse({});
    if (result.success) continue;
    for (const field of describeIssues(result.error.issues, "body", {})) {
      if (field.path === "body" || field.path.includes(".")) continue;
      missing++;
      assert.equal(field.message, "is required", `${name}: ${field.path}`);
    }
  }
  assert.ok(missing > 20, `found missing fields to check (${missing})`);
  assert.deepEqual(fields(commandSchemas.pin_mode, { pin: 2 }), [{ path: "mode", message: "is required" }]);
  assert.deepEqual(fields(commandSchemas.gpio_write, { pin: 2, value: undefined }), [
    { path: "value", message: "is required" },
  ]);
});
