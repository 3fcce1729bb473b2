import assert from "node:assert/strict";
import { test } from "node:test";
import { parseRestartHint, restartCloseReason, restartRetry } from "../src/hardware.ts";

test("restart hint: the window the server writes is read back as it is", () => {
  assert.deepEqual(parseRestartHint(restartCloseReason()), {
    minMs: restartRetry.minMs,
    maxMs: restartRetry.maxMs,
  });
  assert.deepEqual(parseRestartHint("server restarting; retry in 250-4000 ms"), { minMs: 250, maxMs: 4000 });
});

test("restart hint: clamped into [floor, backoff cap], never a tight loop nor longer than the backoff", () => {
  const { hintFloorMs: floor, hintCeilingMs: ceiling } = restartRetry;
  assert.equal(floor, 100);
  assert.equal(ceiling, 30_000);
  assert.deepEqual(parseRestartHint("retry in 0-500 ms"), { minMs: floor, maxMs: 500 });
  assert.deepEqual(parseRestartHint("retry in 5000-999999 ms"), { minMs: 5000, maxMs: ceiling });
  // Nothing left after clamping: the defaults apply.
  assert.equal(parseRestartHint("retry in 0-1 ms"), null);
  assert.equal(parseRestartHint("retry in 0-100 ms"), null);
  assert.equal(parseRestartHint("retry in 40000-999999 ms"), null);
  assert.equal(parseRestartHint("retry in 5-5 ms"), null);
  assert.equal(parseRestartHint("retry in 1234567-2 ms"), null);
  assert.equal(parseRestartHint("server shutting down"), null);
});
