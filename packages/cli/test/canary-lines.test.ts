// What `sdk deploy --canary/--window` accepts, and the progress line it prints while a canary runs.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { Deployment, Rollout, RolloutHealth } from "@sdk/protocol";
import { UsageError } from "../src/errors.ts";
import { clock, parseCanary, parseWindow, progressLine, rolledBackReason } from "../src/rollout-lines.ts";

test("--canary takes a tag or a whole percentage from 1% to 99%", () => {
  assert.deepEqual(parseCanary("kitchen"), { tag: "kitchen" });
  assert.deepEqual(parseCanary("floor-2"), { tag: "floor-2" });
  assert.deepEqual(parseCanary("25%"), { percent: 25 });
  assert.deepEqual(parseCanary("1%"), { percent: 1 });
  assert.deepEqual(parseCanary("99%"), { percent: 99 });
  for (const [value, message] of [
    ["0%", /whole percentage from 1% to 99%/],
    ["100%", /whole percentage from 1% to 99%/],
    ["12.5%", /whole percentage/],
    ["%", /a tag \(kitchen\) or a share/],
    ["", /a tag \(kitchen\) or a share/],
    ["Kitchen", /not a valid tag/],
    ["a b", /not a valid tag/],
  ] as const) {
    assert.throws(
      () => parseCanary(value),
      (e: unknown) => e instanceof UsageError && message.test(e.message),
    );
  }
});

test("--window takes seconds or a number with s, m or h, from 1 s to 24 h", () => {
  assert.equal(parseWindow("2"), 2);
  assert.equal(parseWindow("90s"), 90);
  assert.equal(parseWindow("5m"), 300);
  assert.equal(parseWindow("1h"), 3600);
  assert.equal(parseWindow("24h"), 86_400);
  for (const value of ["0", "25h", "5 minutes", "-3", "1.5m", "m", ""])
    assert.throws(
      () => parseWindow(value),
      (e: unknown) => e instanceof UsageError && /90s, 5m, 1h/.test(e.message),
      value,
    );
});

const health = (more: Partial<RolloutHealth>): RolloutHealth => ({
  devices: 0,
  calls: 0,
  errors: 0,
  timeouts: 0,
  connects: 0,
  connectErrors: 0,
  disconnects: 0,
  commands: 0,
  commandErrors: 0,
  ...more,
});

test("the progress line shows both sides and the time left; the reason comes from the rollout", () => {
  const rollout: Rollout = {
    kind: "canary",
    target: { tag: "kitchen" },
    devices: ["dev_a"],
    stableDeploymentId: "dep_x",
    windowSeconds: 300,
    startedAt: "2026-01-01T00:00:00.000Z",
    endsAt: "2026-01-01T00:05:00.000Z",
    decision: null,
    decidedAt: null,
    reason: null,
    rollback: true,
    health: {
      canary: health({ devices: 1, calls: 12, errors: 2, timeouts: 1, disconnects: 1 }),
      stable: health({ devices: 3, calls: 40, commands: 5, commandErrors: 1 }),
    },
  };
  const deployment = { version: 3, rollout, error: null } as Deployment;
  assert.equal(
    progressLine(deployment, rollout, Date.parse("2026-01-01T00:00:55.000Z")),
    "Canary v3: 1 device, 12 calls, 3 failed (1 timeout), 1 disconnect · stable: 3 devices, 40 calls, 0 failed, 1 of 5 commands failed · 4:05 left",
  );
  assert.match(progressLine(deployment, rollout, Date.parse("2026-01-01T00:06:00.000Z")), /· deciding$/);
  assert.equal(clock(3725), "1:02:05");
  assert.equal(clock(9), "0:09");
  assert.equal(
    rolledBackReason({ ...deployment, rollout: { ...rollout, reason: "rolled back: 12 of 12" } }),
    "12 of 12",
  );
  assert.equal(rolledBackReason({ ...deployment, rollout: null, error: "crash loop" }), "crash loop");
});
