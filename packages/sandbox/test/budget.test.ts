import assert from "node:assert/strict";
import { test } from "node:test";
import { bundle, load } from "./helpers.ts";

const script = `import { DeviceScript } from "@sdk/device";
export default class Budgeted extends DeviceScript {
  async onMessage(msg) {
    if (msg.type === "spin") for (;;) {}
    if (msg.type === "n") console.log("n " + msg.n);
  }
}`;

test("over its CPU budget, a sandbox's messages wait for the next window and then run in order", async (t) => {
  let throttled = 0;
  let delivered = 0;
  const { sandbox, host } = await load(t, await bundle(script), {
    limits: { timeoutMs: 30, cpuBudgetMs: 10 },
    onThrottle: () => throttled++,
    onDelivered: (n) => {
      delivered += n;
    },
  });
  sandbox.attach("d1", "pico_w");
  sandbox.deliver("d1", { type: "spin" });
  assert.equal(delivered, 1);
  for (let n = 1; n <= 5; n++) sandbox.deliver("d1", { type: "n", n });
  assert.equal(throttled, 1, "told once for the window");
  assert.equal(sandbox.waitingMessages, 5);
  assert.deepEqual(
    host.logs.map((l) => l.message),
    ["Script execution timeout"],
    "nothing after the spin ran yet",
  );
  await host.next("n 5");
  assert.deepEqual(
    host.logs.slice(1).map((l) => l.message),
    ["n 1", "n 2", "n 3", "n 4", "n 5"],
  );
  assert.equal(delivered, 6);
  assert.equal(sandbox.waitingMessages, 0);
});

test("dispose drops what waits and counts it as delivered", async (t) => {
  let delivered = 0;
  const { sandbox } = await load(t, await bundle(script), {
    limits: { timeoutMs: 30, cpuBudgetMs: 10 },
    onDelivered: (n) => {
      delivered += n;
    },
  });
  sandbox.attach("d1", "pico_w");
  sandbox.deliver("d1", { type: "spin" });
  sandbox.deliver("d1", { type: "n", n: 1 });
  sandbox.deliver("d1", { type: "n", n: 2 });
  sandbox.dispose();
  assert.equal(delivered, 3);
});
