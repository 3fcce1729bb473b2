// Rollouts on an instance of a cluster (docs/scripts.md, "Staged deploys"): canaries are refused
// with 409 canary_needs_one_instance, plain deploys take the slot as on one server; at boot only
// the watches whose window has long ended are decided (a running one is another instance's).
import assert from "node:assert/strict";
import { test } from "node:test";
import type { Rollout } from "@sdk/protocol";
import { AppError } from "../src/errors.ts";
import { InProcessEventBus } from "../src/events/bus.ts";
import type { DeploymentRow } from "../src/repositories/deployments.ts";
import { recoverRollouts } from "../src/services/rollout-recovery.ts";
import { rolloutsService } from "../src/services/rollouts.ts";
import { TestClock } from "./helpers/clock.ts";

const minute = 60_000;
const fail = (error: unknown) => assert.fail(error as Error);

function service(cluster: boolean) {
  return rolloutsService({
    repos: {} as never,
    scripts: {} as never,
    logs: {} as never,
    bus: new InProcessEventBus(fail),
    clock: new TestClock(),
    windowSeconds: 300,
    onError: fail,
    cluster,
  });
}

test("in a cluster a canary is refused with 409 canary_needs_one_instance; plain deploys go on", () => {
  const rollouts = service(true);
  assert.throws(
    () => rollouts.take("prj_1", true),
    (e: unknown) =>
      e instanceof AppError &&
      e.code === "canary_needs_one_instance" &&
      e.status === 409 &&
      /one instance/.test(e.message) &&
      /without --canary/.test(e.message),
  );
  const release = rollouts.take("prj_1", false);
  const another = rollouts.take("prj_1", false);
  release();
  another();
  // On a server of one instance the same request takes the slot.
  service(false).take("prj_1", true)();
});

test("boot recovery in a cluster leaves running watches to their instance", async () => {
  const clock = new TestClock();
  const rollout = (startedMsAgo: number, kind: Rollout["kind"]): string => {
    const started = clock.now() - startedMsAgo;
    return JSON.stringify({
      kind,
      target: null,
      devices: kind === "canary" ? ["dev_1"] : [],
      stableDeploymentId: null,
      windowSeconds: 60,
      startedAt: new Date(started).toISOString(),
      endsAt: new Date(started + minute).toISOString(),
      decision: null,
      decidedAt: null,
      reason: null,
      rollback: true,
    });
  };
  const row = (id: string, status: DeploymentRow["status"], json: string) =>
    ({ id, projectId: "prj_1", version: 1, status, rollout: json, createdBy: "usr_1" }) as DeploymentRow;
  const rows = [
    row("dep_running", "active", rollout(10_000, "watch")),
    row("dep_just_ended", "active", rollout(90_000, "watch")),
    row("dep_long_ended", "active", rollout(10 * minute, "watch")),
    row("dep_canary", "canary", rollout(10_000, "canary")),
  ];
  const decided = new Map<string, string>();
  const repos = {
    deployments: {
      undecided: async () => rows,
      setRollout: async (id: string, json: string) => {
        decided.set(id, (JSON.parse(json) as Rollout).decision ?? "none");
      },
      markRolledBack: async (_projectId: string, id: string) => {
        decided.set(id, "rolled_back");
      },
    },
  } as never;
  const logged: string[] = [];
  const recover = (cluster: boolean) =>
    recoverRollouts({
      repos,
      bus: new InProcessEventBus(fail),
      clock,
      deviceLog: async (_l, _level, message) => logged.push(message),
      cluster,
    });

  await recover(true);
  assert.deepEqual(Object.fromEntries(decided), { dep_long_ended: "promoted", dep_canary: "rolled_back" });
  assert.equal(logged.length, 1, "the canary's device is told");

  decided.clear();
  await recover(false);
  assert.deepEqual(
    [...decided.keys()].sort(),
    ["dep_canary", "dep_just_ended", "dep_long_ended", "dep_running"],
    "one server decides every rollout cut off by its restart",
  );
});
