// How `sdk deploy --canary` follows a canary, against a stand-in for the API: it ends with the
// server's decision, stops waiting on a 404 / an API error / a server out of reach for a while / no
// decision long after the window, gives each poll a time limit, and paces its polls and lines.
import assert from "node:assert/strict";
import { test } from "node:test";
import { SdkApiError, type SdkClient, SdkNetworkError } from "@sdk/client";
import type { Deployment, Rollout, RolloutHealth } from "@sdk/protocol";
import { type FollowPacing, followCanary, followHint, pollDelay } from "../src/canary-follow.ts";
import { Output } from "../src/output.ts";

const health = (calls: number): RolloutHealth => ({
  devices: 1,
  calls,
  errors: 0,
  timeouts: 0,
  connects: 1,
  connectErrors: 0,
  disconnects: 0,
  commands: 0,
  commandErrors: 0,
});

function deployment(status: Deployment["status"], calls = 0, windowSeconds = 600): Deployment {
  const start = Date.now();
  const rollout: Rollout = {
    kind: "canary",
    target: { tag: "kitchen" },
    devices: ["dev_a"],
    stableDeploymentId: "dep_stable",
    windowSeconds,
    startedAt: new Date(start).toISOString(),
    endsAt: new Date(start + windowSeconds * 1000).toISOString(),
    decision: status === "canary" ? null : status === "active" ? "promoted" : "rolled_back",
    decidedAt: null,
    reason: null,
    rollback: true,
    health: { canary: health(calls), stable: health(0) },
  };
  return { id: "dep_canary", version: 4, status, rollout, error: null } as Deployment;
}

/** A client whose getDeployment answers with `answers` in turn (the last one again and again). */
function fakeClient(answers: ((signal: AbortSignal | undefined) => Promise<Deployment>)[]) {
  let calls = 0;
  const client = {
    api: {
      getDeployment: (input: { signal?: AbortSignal }) => {
        const answer = answers[Math.min(calls, answers.length - 1)]!;
        calls++;
        return answer(input.signal);
      },
    },
  } as unknown as SdkClient;
  return { client, calls: () => calls };
}

const fast: Partial<FollowPacing> = { minPollMs: 1, maxPollMs: 2 };
const quiet = new Output({ json: true });
const offline = () => Promise.reject(new SdkNetworkError("http://x", "Could not reach http://x"));

test("the poll waits a 60th of the window left, from 1 s to 10 s", () => {
  const pacing = { minPollMs: 1_000, maxPollMs: 10_000 };
  assert.equal(pollDelay(3_600_000, pacing), 10_000);
  assert.equal(pollDelay(120_000, pacing), 2_000);
  assert.equal(pollDelay(30_000, pacing), 1_000);
  assert.equal(pollDelay(-5_000, pacing), 1_000);
});

test("following ends with the decision; without a terminal, a line only when the figures change", async () => {
  const api = fakeClient([
    async () => deployment("canary", 0),
    async () => deployment("canary", 3),
    async () => deployment("canary", 3),
    async () => deployment("rolled_back", 5),
  ]);
  const lines: string[] = [];
  const write = process.stderr.write;
  process.stderr.write = ((text: string) => {
    lines.push(text);
    return true;
  }) as typeof process.stderr.write;
  let end: Awaited<ReturnType<typeof followCanary>>;
  try {
    end = await followCanary(api.client, "prj_x", deployment("canary", 0), new Output({ json: false }), fast);
  } finally {
    process.stderr.write = write;
  }
  assert.equal(end.stopped, null);
  assert.equal(end.deployment.status, "rolled_back");
  assert.equal(api.calls(), 4);
  if (process.stderr.isTTY) return; // a spinner line instead
  assert.deepEqual(
    lines.map((l) => /1 device, (\d+) calls?/.exec(l)?.[1]),
    ["0", "3"],
    "the first figures, then once when they changed",
  );
});

test("a deployment that is gone (404) or an API error stops waiting with the last deployment", async () => {
  const gone = fakeClient([
    () =>
      Promise.reject(new SdkApiError(404, { code: "not_found", message: "No such deployment", docs: "" })),
  ]);
  const ended = await followCanary(gone.client, "prj_x", deployment("canary"), quiet, fast);
  assert.equal(ended.stopped, "the deployment no longer exists");
  assert.equal(ended.deployment.status, "canary");

  const broken = fakeClient([
    async () => deployment("canary", 7),
    () => Promise.reject(new SdkApiError(500, { code: "internal_error", message: "Boom", docs: "" })),
  ]);
  const failed = await followCanary(broken.client, "prj_x", deployment("canary"), quiet, fast);
  assert.equal(failed.stopped, "the server answered internal_error: Boom");
  assert.equal(failed.deployment.rollout?.health.canary.calls, 7, "the last deployment read");
});

test("network failures are tolerated for a while (with backoff), then it stops waiting", async () => {
  const flaky = fakeClient([offline, offline, offline, async () => deployment("active", 2)]);
  const decided = await followCanary(flaky.client, "prj_x", deployment("canary"), quiet, {
    ...fast,
    offlineMs: 60_000,
  });
  assert.equal(decided.stopped, null);
  assert.equal(decided.deployment.status, "active");

  const down = fakeClient([offline]);
  const stopped = await followCanary(down.client, "prj_x", deployment("canary"), quiet, {
    ...fast,
    offlineMs: 30,
  });
  assert.match(stopped.stopped ?? "", /^the server could not be reached for \d+ s: Could not reach/);
  assert.ok(down.calls() >= 2, "more than one try");
});

test("each poll has a time limit: a server that never answers counts as out of reach", async () => {
  const hanging = fakeClient([
    (signal) =>
      new Promise<Deployment>((_, reject) => {
        assert.ok(signal, "the poll gets a signal");
        signal.addEventListener("abort", () =>
          reject(new SdkNetworkError("http://x", "No answer from http://x: the request timed out")),
        );
      }),
  ]);
  const stopped = await followCanary(hanging.client, "prj_x", deployment("canary"), quiet, {
    ...fast,
    requestMs: 5,
    offlineMs: 20,
  });
  assert.match(stopped.stopped ?? "", /could not be reached .*timed out/);
});

test("no decision long after the window ended: it stops waiting", async () => {
  const stuck = fakeClient([async () => deployment("canary", 1, 1)]);
  const stopped = await followCanary(stuck.client, "prj_x", deployment("canary", 0, 1), quiet, {
    ...fast,
    afterWindowMs: 0,
  });
  assert.match(stopped.stopped ?? "", /^no decision \d+ s after the window ended$/);
});

test("the hint links to the dashboard's Deployments section", () => {
  const hint = followHint(deployment("canary"), "http://pi:8080", "prj_x");
  assert.match(hint, /sdk status --project prj_x/);
  assert.match(hint, /http:\/\/pi:8080\/projects\/prj_x#deployments-title$/);
});
