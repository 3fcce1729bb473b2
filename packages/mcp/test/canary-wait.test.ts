// The deploy tool's wait for a canary's decision, against a stand-in for the API: it ends with the
// decision, or stops (the canary going on) at its deadline, when the agent cancels the call, or when
// a read fails; and the rollout text says the decision once.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { SdkClient } from "@sdk/client";
import { SdkNetworkError } from "@sdk/client";
import type { Deployment, Rollout } from "@sdk/protocol";
import { rolloutText, waitForDecision, windowEndsBefore } from "../src/canary.ts";

const health = {
  devices: 1,
  calls: 4,
  errors: 0,
  timeouts: 0,
  connects: 1,
  connectErrors: 0,
  disconnects: 0,
  commands: 0,
  commandErrors: 0,
};

function deployment(
  status: Deployment["status"],
  reason: string | null = null,
  windowSeconds = 30,
): Deployment {
  const rollout: Rollout = {
    kind: "canary",
    target: { tag: "bench" },
    devices: ["dev_a"],
    stableDeploymentId: "dep_s",
    windowSeconds,
    startedAt: "2026-01-01T00:00:00.000Z",
    endsAt: "2026-01-01T00:00:30.000Z",
    decision: status === "canary" ? null : status === "active" ? "promoted" : "rolled_back",
    decidedAt: null,
    reason,
    rollback: true,
    health: { canary: health, stable: health },
  };
  return { id: "dep_c", version: 3, status, rollout, error: null } as Deployment;
}

function fakeClient(answer: (signal: AbortSignal | undefined, call: number) => Promise<Deployment>) {
  let calls = 0;
  return {
    api: { getDeployment: (input: { signal?: AbortSignal }) => answer(input.signal, calls++) },
  } as unknown as SdkClient;
}

test("a canary is waited for only when its window ends before the deadline", () => {
  const soon = performance.now() + 40_000;
  assert.equal(windowEndsBefore(deployment("canary", null, 30), soon), true);
  assert.equal(windowEndsBefore(deployment("canary", null, 60), soon), false);
  assert.equal(windowEndsBefore(deployment("active"), soon), false);
});

test("waiting ends with the decision, or stops at the deadline, on cancel, or when a read fails", async () => {
  const decides = fakeClient(async (_, call) =>
    call < 2 ? deployment("canary") : deployment("active", "promoted: within the thresholds"),
  );
  const decided = await waitForDecision(decides, "prj_x", deployment("canary"), {
    deadline: performance.now() + 60_000,
  });
  assert.equal(decided.stopped, null);
  assert.equal(decided.deployment.status, "active");

  const never = fakeClient(async () => deployment("canary"));
  const late = await waitForDecision(never, "prj_x", deployment("canary"), {
    deadline: performance.now() + 50,
  });
  assert.equal(late.deployment.status, "canary");
  assert.equal(late.stopped, "not decided yet when the wait ended");

  const cancel = new AbortController();
  const hanging = fakeClient(
    (signal) =>
      new Promise<Deployment>((_, reject) => {
        signal?.addEventListener("abort", () => reject(new Error("aborted")));
        cancel.abort();
      }),
  );
  const cancelled = await waitForDecision(hanging, "prj_x", deployment("canary"), {
    deadline: performance.now() + 60_000,
    signal: cancel.signal,
  });
  assert.equal(cancelled.stopped, "the call was cancelled");

  const down = fakeClient(() => Promise.reject(new SdkNetworkError("http://x", "Could not reach http://x")));
  const failed = await waitForDecision(down, "prj_x", deployment("canary"), {
    deadline: performance.now() + 60_000,
  });
  assert.equal(failed.deployment.status, "canary");
  assert.match(failed.stopped ?? "", /could not read it \(Could not reach/);
});

test("the rollout text says the decision once", () => {
  const rolled = rolloutText(deployment("rolled_back", "rolled back: 12 of 12 handler calls failed (100 %)"));
  assert.match(rolled, /Reason: 12 of 12 handler calls failed/);
  assert.doesNotMatch(rolled, /rolled back: 12/);
  const promoted = rolloutText(deployment("active", "promoted: within the thresholds for 30 s"));
  assert.match(promoted, /^Decision: promoted: within the thresholds for 30 s$/m);
  const byHand = rolloutText(deployment("active", "promoted by hand (a@b.c)"));
  assert.match(byHand, /^Decision: promoted by hand \(a@b\.c\)$/m);
});
