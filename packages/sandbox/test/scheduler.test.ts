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

const clockScript = `import { DeviceScript } from "@sdk/device";
export default class Clock extends DeviceScript {
  onDeviceConnect() {
    const d = new Date();
    this.env.DEVICE.emitState("time", {
      now: Date.now(),
      iso: d.toISOString(),
      isDate: d instanceof Date,
      string: typeof Date(),
      fixed: new Date(0).toISOString(),
      parsed: Date.parse("2026-01-01T00:00:00Z"),
      random: [Math.random(), Math.random(), Math.random()],
    });
  }
}`;

test("a given time: Date.now(), new Date() and Date() read it; Math.random() is seeded; without it, the real ones", async (t) => {
  const script = await bundle(clockScript);
  const at = Date.parse("2026-11-24T06:00:00.000Z");
  let now = at;
  const seeded = async (seed: number) => {
    const { sandbox, host } = await load(t, script, { time: { now: () => now, seed } });
    sandbox.attach("d1", "pico_w");
    return host.states[0]!.value as { now: number; random: number[] } & Record<string, unknown>;
  };
  const first = await seeded(42);
  assert.deepEqual(
    { ...first, random: undefined },
    {
      now: at,
      iso: "2026-11-24T06:00:00.000Z",
      isDate: true,
      string: "string",
      fixed: "1970-01-01T00:00:00.000Z",
      parsed: Date.parse("2026-01-01T00:00:00Z"),
      random: undefined,
    },
  );
  assert.ok(first.random.every((r) => r >= 0 && r < 1) && new Set(first.random).size === 3);
  now += 1500;
  const again = await seeded(42);
  assert.equal(again.now, at + 1500, "the host's time as it is now");
  assert.deepEqual(again.random, first.random, "the same seed, the same numbers");
  assert.notDeepEqual((await seeded(7)).random, first.random);

  const { sandbox, host } = await load(t, script);
  const before = Date.now();
  sandbox.attach("d1", "pico_w");
  const real = host.states[0]!.value as { now: number };
  assert.ok(real.now >= before && real.now <= Date.now(), "the real time by default");
});
