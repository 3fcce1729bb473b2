import assert from "node:assert/strict";
import { test } from "node:test";
import type { Scheduler } from "../src/index.ts";
import { activeTimers, bundle, load } from "./helpers.ts";

/** A scheduler that only fires when the test says so. */
class ManualScheduler implements Scheduler {
  readonly pending = new Map<number, { fn: () => void; ms: number; repeat: boolean }>();
  #next = 1;
  setTimeout(fn: () => void, ms: number): unknown {
    this.pending.set(this.#next, { fn, ms, repeat: false });
    return this.#next++;
  }
  setInterval(fn: () => void, ms: number): unknown {
    this.pending.set(this.#next, { fn, ms, repeat: true });
    return this.#next++;
  }
  clear(handle: unknown): void {
    this.pending.delete(handle as number);
  }
  fire(handle: number): void {
    const timer = this.pending.get(handle)!;
    if (!timer.repeat) this.pending.delete(handle);
    timer.fn();
  }
}

const script = `import { DeviceScript } from "@sdk/device";
export default class Ticks extends DeviceScript {
  onDeviceConnect() {
    let n = 0;
    setInterval(() => this.env.DEVICE.emitState("tick", ++n), 1000);
    setTimeout(() => console.log("once"), 5);
  }
}`;

test("an injected scheduler runs the script's timers (minimum delay applied); no host timer is used", async (t) => {
  const scheduler = new ManualScheduler();
  const before = activeTimers();
  const { sandbox, host } = await load(t, await bundle(script), { scheduler });
  sandbox.attach("d1", "pico_w");
  assert.deepEqual(
    [...scheduler.pending.values()].map((p) => [p.ms, p.repeat]),
    [
      [1000, true],
      [10, false],
    ],
  );
  assert.equal(activeTimers(), before, "no Node.js timer runs the script's timers");
  const [interval, timeout] = [...scheduler.pending.keys()] as [number, number];
  scheduler.fire(timeout);
  scheduler.fire(interval);
  scheduler.fire(interval);
  assert.deepEqual(host.messages, ["once"]);
  assert.deepEqual(
    host.states.map((s) => s.value),
    [1, 2],
  );
  sandbox.detach("d1");
  assert.equal(scheduler.pending.size, 0, "detach cleared the interval through the scheduler");
});
