import assert from "node:assert/strict";
import { test } from "node:test";
import { bundle, load } from "./helpers.ts";

const capMb = 32;

test("a script that allocates past the memory cap gets its sandbox disposed and onFault called", async (t) => {
  let faulted: (reason: string) => void = () => {};
  const fault = new Promise<string>((resolve) => {
    faulted = resolve;
  });
  const { sandbox, host } = await load(
    t,
    await bundle(`import { DeviceScript } from "@sdk/device";
const kept: number[][] = [];
export default class Hog extends DeviceScript {
  onMessage() {
    for (;;) kept.push(new Array(1 << 16).fill(kept.length));
  }
}`),
    { limits: { memoryBytes: capMb * 1024 * 1024, timeoutMs: 5000 }, onFault: (reason) => faulted(reason) },
  );
  sandbox.attach("d1", "pico_w");
  sandbox.deliver("d1", { type: "go" });
  assert.match(
    await fault,
    new RegExp(`^memory limit exceeded: the project's scripts reached the ${capMb} MB cap$`),
  );
  assert.equal(sandbox.disposed, true);
  assert.deepEqual(sandbox.devices, []);
  assert.equal(sandbox.deliver("d1", { type: "again" }), false);
  assert.match(host.messages.at(-1)!, /^memory limit exceeded: .*\nThe project's scripts were stopped\.$/);
});

test("a sandbox under its cap keeps running; each project has its own memory", async (t) => {
  const script = await bundle(`import { DeviceScript } from "@sdk/device";
export default class Small extends DeviceScript {
  onMessage() { console.log("size", new Array(1000).fill(1).length); }
}`);
  const limits = { memoryBytes: capMb * 1024 * 1024 };
  const a = await load(t, script, { limits });
  const b = await load(t, script, { limits });
  a.sandbox.attach("d1", "pico_w");
  a.sandbox.deliver("d1", {});
  assert.deepEqual(a.host.messages, ["size 1000"]);
  assert.ok(a.sandbox.memoryBytes <= capMb * 1024 * 1024);
  a.sandbox.dispose();
  b.sandbox.attach("d2", "pico_w");
  b.sandbox.deliver("d2", {});
  assert.deepEqual(b.host.messages, ["size 1000"]);
});
