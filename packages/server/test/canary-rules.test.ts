import assert from "node:assert/strict";
import { test } from "node:test";
import { canaryVerdict, crashLoop, shuffled } from "../src/services/rollout-rules.ts";
import {
  countFailure,
  countsAsScriptError,
  type HealthCounts,
  type HealthWatch,
  newHealthCounts,
} from "../src/services/script-health.ts";

const side = (counts: Partial<Omit<HealthCounts, "devices">>, devices = 1): HealthCounts => ({
  ...newHealthCounts(),
  ...counts,
  devices: new Set(Array.from({ length: devices }, (_, i) => `dev_${i}`)),
});
const watch = (canary: HealthCounts, stable: HealthCounts): HealthWatch => ({
  canaryId: "dep_c",
  stableId: "dep_s",
  canary,
  stable,
});

test("within the thresholds: no verdict", () => {
  assert.equal(canaryVerdict(watch(side({ calls: 100, errors: 2 }), side({ calls: 100 }))), null);
  assert.equal(canaryVerdict(watch(side({ calls: 10, errors: 2 }), side({ calls: 10, errors: 2 }))), null);
  assert.equal(
    canaryVerdict(watch(side({ calls: 10, errors: 3 }), side({ calls: 10, errors: 3 }))),
    null,
    "no worse than the stable version",
  );
});

test("failure rate over the stable rate + 5 points with at least 3 failures", () => {
  assert.equal(
    canaryVerdict(watch(side({ calls: 12, errors: 10, timeouts: 2 }), side({ calls: 40 }))),
    "rolled back: 12 of 12 handler calls failed (100 %) against 0 of 40 (0 %) on the stable version",
  );
});

test("every onDeviceConnect threw", () => {
  assert.equal(crashLoop(side({ connects: 0 })), null);
  assert.equal(crashLoop(side({ connects: 2, connectErrors: 1 })), null);
  assert.equal(crashLoop(side({ connects: 2, connectErrors: 2 })), "every onDeviceConnect threw (2 of 2)");
  assert.match(
    canaryVerdict(watch(side({ calls: 1, errors: 1, connects: 1, connectErrors: 1 }), side({})))!,
    /^rolled back: every onDeviceConnect threw \(1 of 1\) on the canary's devices$/,
  );
});

test("command error rate over the stable rate + 10 points with at least 3 command errors", () => {
  assert.equal(canaryVerdict(watch(side({ commands: 10, commandErrors: 2 }), side({ commands: 10 }))), null);
  assert.equal(
    canaryVerdict(watch(side({ commands: 10, commandErrors: 3 }), side({ commands: 10 }))),
    "rolled back: 3 of 10 commands failed (30 %) against 0 of 10 (0 %) on the stable version",
  );
});

test("disconnect share: devices that disconnected twice or more, over the stable share + 25 points", () => {
  const flapping = (
    times: number[],
    devices: number,
    counts: Partial<Omit<HealthCounts, "devices">> = {},
  ) => {
    const h = side({ disconnects: times.reduce((a, b) => a + b, 0), ...counts }, devices);
    for (const [i, n] of times.entries()) h.disconnected.set(`dev_${i}`, n);
    return h;
  };
  assert.equal(
    canaryVerdict(watch(flapping([1], 1), side({}, 8))),
    null,
    "one reconnect of a one-device canary is not held against it",
  );
  assert.equal(canaryVerdict(watch(flapping([2], 4), side({}, 4))), null, "1 of 4 is 25 points, not over");
  assert.equal(
    canaryVerdict(watch(flapping([2], 1), side({}, 8))),
    "rolled back: 1 of 1 canary device disconnected 2 times or more (100 %) against 0 of 8 (0 %) on the stable version",
  );
  assert.equal(
    canaryVerdict(watch(flapping([3, 1], 2), flapping([2], 8))),
    "rolled back: 1 of 2 canary devices disconnected 2 times or more (50 %) against 1 of 8 (13 %) on the stable version",
  );
});

test("a percentage canary's members are a permutation's prefix (Fisher–Yates)", () => {
  const ids = Array.from({ length: 20 }, (_, i) => `dev_${i}`);
  const out = shuffled(ids);
  assert.deepEqual([...out].sort(), [...ids].sort());
  assert.deepEqual(shuffled([]), []);
  assert.deepEqual(shuffled(["only"]), ["only"]);
});

test("an onDeviceDisconnect error counts neither for the health nor for the script_errors alert rule", () => {
  const h = newHealthCounts();
  countFailure(h, "error", "disconnect");
  assert.equal(h.errors, 0);
  assert.equal(countsAsScriptError("disconnect"), false);
  countFailure(h, "error", "message");
  assert.equal(h.errors, 1);
  assert.equal(countsAsScriptError("message"), true);
  assert.equal(countsAsScriptError(undefined), true, "a failure the worker did not place still counts");
});
