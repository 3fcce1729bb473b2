import assert from "node:assert/strict";
import { test } from "node:test";
import { scriptTimeoutMessage } from "../src/index.ts";
import { bundle, load } from "./helpers.ts";

const script = `import { DeviceScript } from "@sdk/device";
export default class Loops extends DeviceScript {
  onMessage(msg) {
    if (msg.type === "loop") for (;;) {}
    if (msg.type === "caught") { try { for (;;) {} } catch {} console.log("after the catch"); }
    if (msg.type === "async") Promise.resolve().then(() => { for (;;) {} });
    if (msg.type === "await") return (async () => { await null; for (;;) {} })();
    if (msg.type === "ping") console.log("pong", msg.n);
  }
}`;

test("a handler past its deadline is stopped, the host logs the timeout, and the sandbox keeps working", async (t) => {
  const { sandbox, host } = await load(t, await bundle(script));
  sandbox.attach("d1", "pico_w");
  for (const [n, type] of ["loop", "caught", "async", "await"].entries()) {
    const since = host.logs.length;
    assert.equal(sandbox.deliver("d1", { type }), true);
    const line = await host.next(scriptTimeoutMessage, since);
    assert.deepEqual(line, { deviceId: "d1", level: "error", message: scriptTimeoutMessage }, type);
    assert.equal(host.messages.slice(since).filter((m) => m === scriptTimeoutMessage).length, 1, type);
    sandbox.deliver("d1", { type: "ping", n });
    await host.next(`pong ${n}`, since);
  }
  assert.ok(!host.messages.includes("after the catch"), "a caught interrupt does not let the handler go on");
  assert.equal(sandbox.disposed, false);
});

test("promise jobs run under the deadline of the entry that queued them, never in the next entry's", async (t) => {
  const { sandbox, host } = await load(
    t,
    await bundle(`import { DeviceScript } from "@sdk/device";
export default class Chain extends DeviceScript {
  onMessage(msg) {
    if (msg.type === "chain") {
      const step = () => Promise.resolve().then(step);
      step();
      setTimeout(() => console.log("timer after the chain"), 10);
    } else console.log("then", msg.type);
  }
}`),
  );
  sandbox.attach("d1", "pico_w");
  sandbox.deliver("d1", { type: "chain" });
  // QuickJS polls for the interrupt every few thousand calls, so where it lands in the chain's
  // cycle depends on how many calls ran before: either the interrupt cuts the chain, or the chain
  // outlives the leftover-jobs deadline and the project's scripts are stopped. In neither case may
  // the chain run on inside a later entry.
  assert.equal(host.messages[0], scriptTimeoutMessage);
  if (host.messages.length === 1) {
    assert.equal(sandbox.disposed, false);
    await host.next("timer after the chain");
    sandbox.deliver("d1", { type: "message" });
    assert.deepEqual(host.messages, [scriptTimeoutMessage, "timer after the chain", "then message"]);
    assert.equal(sandbox.disposed, false);
  } else {
    assert.deepEqual(host.messages, [
      scriptTimeoutMessage,
      "a chain of promise jobs kept running past the deadline\nThe project's scripts were stopped.",
    ]);
    assert.equal(sandbox.disposed, true);
    assert.equal(sandbox.deliver("d1", { type: "message" }), false);
    assert.equal(host.messages.length, 2, "a stopped sandbox runs nothing");
  }
});
