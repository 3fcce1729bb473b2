// The rollouts service's rules with the script host and the database faked: the slot, promotion
// failures, a window with no canary device. Every step is awaited; no timer fires (1-hour windows).
import assert from "node:assert/strict";
import { test } from "node:test";
import type { DeploymentRow } from "../src/repositories/deployments.ts";
import type { Principal } from "../src/services/auth.ts";
import { rolloutsService } from "../src/services/rollouts.ts";
import { type HealthWatch, newHealthCounts } from "../src/services/script-health.ts";
import { TestClock } from "./helpers/clock.ts";

const principal = { user: { id: "usr_1", email: "a@example.com" } } as unknown as Principal;

function fixture(options: { promote?: () => Promise<void> } = {}) {
  const rows = new Map<string, DeploymentRow>();
  const row = (id: string, version: number, status: DeploymentRow["status"]) => {
    const r = {
      id,
      projectId: "prj_1",
      version,
      status,
      rollout: null,
      error: null,
    } as unknown as DeploymentRow;
    rows.set(id, r);
    return r;
  };
  row("dpl_1", 1, "active");
  let health: HealthWatch | undefined;
  const events: { type: string; payload: unknown }[] = [];
  const scripts = {
    health: () => health,
    watchHealth: (_p: string, canaryId: string | null, stableId: string | null, members: Set<string>) => {
      health = { canaryId, stableId, canary: newHealthCounts(), stable: newHealthCounts() };
      for (const m of members) health.canary.devices.add(m);
    },
    unwatchHealth: (_p: string, id: string) => {
      if (health && (health.canaryId ?? health.stableId) === id) health = undefined;
    },
    startCanary: async () => "dpl_1",
    promoteCanary: async (_p: string, _id: string, commit: () => Promise<void>) => {
      await commit();
      await options.promote?.();
    },
    rollBackCanary: async () => {},
    connectedDevices: () => ["dev_m", "dev_s"],
    setRolloutHooks: () => {},
  };
  const repos = {
    deployments: {
      active: async () => [...rows.values()].find((r) => r.status === "active"),
      find: async (_v: unknown, _p: string, id: string) => rows.get(id),
      markCanary: async (id: string, rollout: string) =>
        Object.assign(rows.get(id)!, { status: "canary", rollout }),
      setRollout: async (id: string, rollout: string) => Object.assign(rows.get(id)!, { rollout }),
      activate: async (_p: string, id: string) => {
        for (const r of rows.values()) if (r.status === "active") r.status = "inactive";
        rows.get(id)!.status = "active";
      },
      markRolledBack: async (
        _p: string,
        id: string,
        reason: string,
        rollout: string,
        previousId: string | null,
      ) => {
        Object.assign(rows.get(id)!, { status: "rolled_back", error: reason, rollout });
        if (previousId) rows.get(previousId)!.status = "active";
      },
      markFailed: async () => {},
      undecided: async () => [],
    },
    devices: { list: async () => [] },
  };
  const bus = {
    publish: async (type: string, payload: unknown) => void events.push({ type, payload }),
    subscribe: () => () => {},
  };
  const rollouts = rolloutsService({
    repos: repos as never,
    scripts: scripts as never,
    logs: { append: async () => {} } as never,
    bus: bus as never,
    clock: new TestClock(),
    windowSeconds: 3600,
    onError: () => {},
  });
  const startCanary = async (id: string, version: number) => {
    const release = rollouts.take("prj_1", true);
    try {
      return await rollouts.startCanary(
        principal,
        "prj_1",
        row(id, version, "pending"),
        { canary: { tag: "c" }, windowSeconds: 3600 },
        new Set(["dev_m"]),
      );
    } finally {
      release();
    }
  };
  return {
    rollouts,
    rows,
    events,
    startCanary,
    health: () => health,
    setHealth: (h: HealthWatch) => (health = h),
  };
}

const code = (c: string) => (e: unknown) => (e as { code?: string }).code === c;

test("the slot: a canary is refused while a plain deploy holds it; plain deploys share it; both are refused during a canary", async () => {
  const f = fixture();
  const plain = f.rollouts.take("prj_1", false);
  assert.throws(() => f.rollouts.take("prj_1", true), code("rollout_in_progress"));
  const second = f.rollouts.take("prj_1", false);
  plain();
  plain(); // releasing twice is harmless
  assert.throws(
    () => f.rollouts.take("prj_1", true),
    code("rollout_in_progress"),
    "the second plain deploy holds it",
  );
  second();
  const c = await f.startCanary("dpl_2", 2);
  assert.equal(f.rows.get("dpl_2")!.status, "canary");
  assert.equal(JSON.parse(c.rollout!).stableDeploymentId, "dpl_1");
  assert.throws(() => f.rollouts.take("prj_1", false), code("rollout_in_progress"));
  assert.throws(() => f.rollouts.take("prj_1", true), code("rollout_in_progress"));
  await f.rollouts.decideByHand(principal, "prj_1", "dpl_2", false);
  f.rollouts.take("prj_1", true)();
});

test("a promotion that fails after its commit is a rollback: the stable one is live again, never left canary", async () => {
  const f = fixture({
    promote: async () => {
      throw new Error("the disk is full");
    },
  });
  await f.startCanary("dpl_2", 2);
  f.health()!.canary.devices.add("dev_m");
  await f.rollouts.decideByHand(principal, "prj_1", "dpl_2", true);
  const d = f.rows.get("dpl_2")!;
  assert.equal(d.status, "rolled_back");
  assert.equal(d.error, "rolled back: the promotion failed (the disk is full)");
  assert.equal(f.rows.get("dpl_1")!.status, "active");
  assert.equal(JSON.parse(d.rollout!).decision, "rolled_back");
  assert.ok(f.events.some((e) => e.type === "deployment.rolled_back"));
  f.rollouts.take("prj_1", true)();
});

test("a canary that ran on no device during its window is rolled back, not promoted", async () => {
  const f = fixture();
  await f.startCanary("dpl_2", 2);
  f.health()!.canary.devices.clear();
  await f.rollouts.endWindowForTests("prj_1");
  const d = f.rows.get("dpl_2")!;
  assert.equal(d.status, "rolled_back");
  assert.equal(d.error, "rolled back: no canary device was connected during the window");
  assert.equal(f.rows.get("dpl_1")!.status, "active");
});

test("a canary inside the thresholds is promoted at its window's end", async () => {
  const f = fixture();
  await f.startCanary("dpl_2", 2);
  await f.rollouts.endWindowForTests("prj_1");
  assert.equal(f.rows.get("dpl_2")!.status, "active");
  assert.equal(f.rows.get("dpl_1")!.status, "inactive");
  assert.match(
    JSON.parse(f.rows.get("dpl_2")!.rollout!).reason,
    /^promoted: within the thresholds for 3600 s on 1 device/,
  );
});
