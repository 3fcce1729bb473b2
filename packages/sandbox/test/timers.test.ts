import assert from "node:assert/strict";
import { test } from "node:test";
import { activeTimers, bundle, load } from "./helpers.ts";

const script = `import { DeviceScript } from "@sdk/device";
export default class Timers extends DeviceScript {
  onMessage(msg) {
    if (msg.type === "once") setTimeout(() => console.log("once", this.deviceId), 0);
    if (msg.type === "interval") {
      let n = 0;
      const id = setInterval(() => { n++; console.log("tick", n); if (n === 3) clearInterval(id); }, 10);
    }
    if (msg.type === "many") {
      let made = 0;
      try { for (;;) { setTimeout(() => {}, 60_000); made++; } }
      catch (e) { console.log("made", made, String(e)); }
    }
    if (msg.type === "slow") for (let i = 0; i < 3; i++) setInterval(() => console.log("slow"), 60_000);
    if (msg.type === "throw") setTimeout(() => { throw new Error("boom in a timer"); }, 10);
    if (msg.type === "after") console.log("after");
  }
}`;

test("setTimeout and setInterval fire; an interval stops when cleared; a delay under 10 ms waits 10 ms", async (t) => {
  const { sandbox, host } = await load(t, await bundle(script));
  sandbox.attach("d1", "pico_w");
  const scheduled = performance.now();
  sandbox.deliver("d1", { type: "once" });
  await host.next("once d1");
  assert.ok(performance.now() - scheduled >= 9, "a 0 ms timeout waits the 10 ms minimum");
  sandbox.deliver("d1", { type: "interval" });
  await host.next("tick 3");
  const before = activeTimers();
  sandbox.deliver("d1", { type: "after" });
  await host.next("after");
  assert.equal(activeTimers(), before, "the cleared interval left no host timer");
  assert.deepEqual(
    host.messages.filter((m) => m.startsWith("tick")),
    ["tick 1", "tick 2", "tick 3"],
  );
});

test("a device may have at most 64 timers; the 65th throws in the script", async (t) => {
  const { sandbox, host } = await load(t, await bundle(script));
  sandbox.attach("d1", "pico_w");
  const before = activeTimers();
  sandbox.deliver("d1", { type: "many" });
  assert.match(host.messages.at(-1)!, /^made 64 RangeError: too many timers: at most 64 per device$/);
  assert.equal(activeTimers(), before + 64);
  sandbox.attach("d2", "pico_w");
  sandbox.deliver("d2", { type: "once" });
  await host.next("once d2");
  sandbox.dispose();
  assert.equal(activeTimers(), before, "dispose cleared them");
});

test("a device's timers are cleared when it detaches, and only its own", async (t) => {
  const { sandbox, host } = await load(t, await bundle(script));
  const before = activeTimers();
  sandbox.attach("d1", "pico_w");
  sandbox.attach("d2", "pico_w");
  sandbox.deliver("d1", { type: "slow" });
  sandbox.deliver("d2", { type: "slow" });
  assert.equal(activeTimers(), before + 6);
  sandbox.detach("d1");
  assert.equal(activeTimers(), before + 3);
  assert.deepEqual(sandbox.devices, ["d2"]);
  sandbox.detach("d2");
  assert.equal(activeTimers(), before);
  assert.deepEqual(host.messages, []);
});

test("an error thrown in a timer callback is logged for its device and later timers still run", async (t) => {
  const { sandbox, host } = await load(t, await bundle(script));
  sandbox.attach("d1", "pico_w");
  sandbox.deliver("d1", { type: "throw" });
  const line = await host.next(/^Error: boom in a timer/);
  assert.equal(line.deviceId, "d1");
  assert.equal(line.level, "error");
  sandbox.deliver("d1", { type: "once" });
  await host.next("once d1");
});
