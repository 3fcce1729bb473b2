import assert from "node:assert/strict";
import { test } from "node:test";
import { handWritten, load } from "./helpers.ts";

// Calls the host functions directly, as a bundle not made by `sdk build` could.
const calls = `
  const tries = {
    "command, type as a number": () => host.command(deviceId, 1, 2, "{}"),
    "command, id as a string": () => host.command(deviceId, "1", "gpio_write", "{}"),
    "command, too few arguments": () => host.command(deviceId, 1, "gpio_write"),
    "command, bad JSON": () => host.command(deviceId, 1, "gpio_write", "{nope"),
    "command, JSON not an object": () => host.command(deviceId, 1, "gpio_write", "[1]"),
    "send, bad JSON": () => host.send(deviceId, "nope"),
    "emitState, other device": () => host.emitState("d9", "x", "1"),
    "log, unknown level": () => host.log(deviceId, "loud", "x"),
    "setTimer, repeat as a string": () => host.setTimer(deviceId, 1, 10, "yes"),
    "setTimer, id as an object": () => host.setTimer(deviceId, {}, 10, false),
    "clearTimer, no arguments": () => host.clearTimer(),
  };
  for (const [what, run] of Object.entries(tries)) {
    try { run(); host.log(deviceId, "info", what + ": accepted"); }
    catch (e) { host.log(deviceId, "info", what + ": " + e.name + ": " + e.message); }
  }
  host.log(deviceId, "info", "still working");
`;

test("host functions reject bad arguments from the guest with a clear error thrown in the guest", async (t) => {
  const { sandbox, host } = await load(t, handWritten(calls));
  sandbox.attach("d1", "pico_w");
  assert.deepEqual(host.messages, [
    "command, type as a number: GuestAbiError: __sdk_host.command: argument 3 must be a string, got number",
    "command, id as a string: GuestAbiError: __sdk_host.command: argument 2 must be a number, got string",
    "command, too few arguments: GuestAbiError: __sdk_host.command: expects 4 arguments (string, number, string, string), got 3",
    "command, bad JSON: GuestAbiError: __sdk_host.command: argsJson is not valid JSON",
    "command, JSON not an object: GuestAbiError: __sdk_host.command: argsJson must be a JSON object",
    "send, bad JSON: GuestAbiError: __sdk_host.send: messageJson is not valid JSON",
    "emitState, other device: GuestAbiError: device d9 is not attached to this project's scripts",
    "log, unknown level: GuestAbiError: log: level must be one of debug, info, warn, error",
    "setTimer, repeat as a string: GuestAbiError: __sdk_host.setTimer: argument 4 must be a boolean, got string",
    "setTimer, id as an object: GuestAbiError: __sdk_host.setTimer: argument 2 must be a number, got object",
    "clearTimer, no arguments: GuestAbiError: __sdk_host.clearTimer: expects 2 arguments (string, number), got 0",
    "still working",
  ]);
  assert.deepEqual(host.commands, []);
  assert.deepEqual(host.sent, []);
  assert.deepEqual(host.states, []);
  assert.equal(sandbox.disposed, false);
});

test("well-formed host calls reach the server's SandboxHost", async (t) => {
  const { sandbox, host } = await load(
    t,
    handWritten(`
  host.command(deviceId, 1, "gpio_write", JSON.stringify({ pin: 2, value: 1 }));
  host.send(deviceId, JSON.stringify({ type: "hello" }));
  host.emitState(deviceId, "temp", "21.5");
  host.log(deviceId, "warn", "careful");
`),
  );
  sandbox.attach("d1", "pico_w");
  assert.deepEqual(host.commands, [{ deviceId: "d1", type: "gpio_write", args: { pin: 2, value: 1 } }]);
  assert.deepEqual(host.sent, [{ deviceId: "d1", message: { type: "hello" } }]);
  assert.deepEqual(host.states, [{ deviceId: "d1", entityId: "temp", value: 21.5 }]);
  assert.deepEqual(host.logs, [{ deviceId: "d1", level: "warn", message: "careful" }]);
});
