import assert from "node:assert/strict";
import { test } from "node:test";
import type { DeploymentRow } from "../src/repositories/deployments.ts";
import { MINUTE, repositorySuites, T0 } from "./helpers/repository-suite.ts";

repositorySuites("repositories: deployments", ({ setup, tenants }) => {
  const row = (projectId: string, id: string, status: DeploymentRow["status"], createdAt = T0) => ({
    id,
    projectId,
    status,
    sha256: "0".repeat(64),
    manifest: "{}",
    error: null,
    createdBy: null,
    createdAt,
    activatedAt: null,
  });
  const js = { bundle: "export default 1;", sourceMap: '{"version":3}' };

  test("prune keeps the newest N and the live one, never a pending one nor another project's", async (t) => {
    const c = await setup(t);
    if (!c) return;
    const { aliceProject, bobProject, asAlice } = await tenants(c);
    const statuses: DeploymentRow["status"][] = [
      "active",
      "inactive",
      "failed",
      "pending",
      "inactive",
      "failed",
    ];
    for (const [i, status] of statuses.entries())
      await c.repos.deployments.insert(row(aliceProject.id, `dpl_a${i}`, status), js);
    await c.repos.deployments.insert(row(bobProject.id, "dpl_b0", "inactive"), js);

    const removed = await c.repos.deployments.prune(aliceProject.id, 2);
    assert.deepEqual(removed.sort(), ["dpl_a1", "dpl_a2"]);
    const left = await c.repos.deployments.list(asAlice, aliceProject.id);
    assert.deepEqual(
      left.map((d) => [d.version, d.status]),
      [
        [6, "failed"],
        [5, "inactive"],
        [4, "pending"],
        [1, "active"],
      ],
    );
    assert.deepEqual(await c.repos.deployments.prune(bobProject.id, 2), []);
    assert.equal(await c.repos.deployments.bundle("dpl_a1"), undefined, "its bundle went with it");
    assert.deepEqual(await c.repos.deployments.bundle("dpl_a0"), js);
  });

  test("bundles: stored with the row, read back, and the import of those only on disk is idempotent", async (t) => {
    const c = await setup(t);
    if (!c) return;
    const { aliceProject } = await tenants(c);
    const deployments = c.repos.deployments;
    await deployments.insert(row(aliceProject.id, "dpl_new", "active"), { bundle: "new();" });
    assert.deepEqual(await deployments.bundle("dpl_new"), { bundle: "new();" }, "no source map: none read");
    assert.equal(await deployments.bundle("dpl_missing"), undefined);
    // A deployment of a server before 0009: its row without a bundle (which was on disk).
    await c.database.db
      .insertInto("deployments")
      .values({ ...row(aliceProject.id, "dpl_old", "inactive"), version: 9, rollout: null })
      .execute();
    assert.deepEqual(await deployments.withoutBundle(), [{ id: "dpl_old", projectId: aliceProject.id }]);
    await deployments.importBundle("dpl_old", js);
    await deployments.importBundle("dpl_old", { bundle: "other();" });
    assert.deepEqual(await deployments.bundle("dpl_old"), js, "the first import is kept");
    assert.deepEqual(await deployments.withoutBundle(), []);
    await deployments.insert(row(aliceProject.id, "dpl_big", "inactive"), { bundle: "x".repeat(2_000_000) });
    assert.equal((await deployments.bundle("dpl_big"))?.bundle.length, 2_000_000, "a 2 MB bundle");
  });

  test("prune keeps the deployments a rollout in its window may go back to (except)", async (t) => {
    const c = await setup(t);
    if (!c) return;
    const { aliceProject } = await tenants(c);
    for (const [i, status] of (["active", "inactive", "inactive", "inactive"] as const).entries())
      await c.repos.deployments.insert(row(aliceProject.id, `dpl_k${i}`, status), js);
    assert.deepEqual(await c.repos.deployments.prune(aliceProject.id, 1, ["dpl_k1"]), ["dpl_k2"]);
  });

  test("failInterrupted fails only deployments pending from before the given time", async (t) => {
    const c = await setup(t);
    if (!c) return;
    const { aliceProject, asAlice } = await tenants(c);
    await c.repos.deployments.insert(row(aliceProject.id, "dpl_old", "pending", T0), js);
    await c.repos.deployments.insert(row(aliceProject.id, "dpl_new", "pending", T0 + 2 * MINUTE), js);
    await c.repos.deployments.failInterrupted(T0 + MINUTE);
    const byId = new Map(
      (await c.repos.deployments.list(asAlice, aliceProject.id)).map((d) => [d.id, d] as const),
    );
    assert.equal(byId.get("dpl_old")!.status, "failed");
    assert.match(byId.get("dpl_old")!.error!, /the server stopped while this deployment was being checked/);
    assert.equal(byId.get("dpl_new")!.status, "pending", "another instance may still be checking it");
  });

  test("canary rollouts: markCanary, setRollout, markRolledBack (with the previous one live again), undecided", async (t) => {
    const c = await setup(t);
    if (!c) return;
    const { aliceProject, bobProject, asAlice, asBob } = await tenants(c);
    const deployments = c.repos.deployments;
    await deployments.insert(row(aliceProject.id, "dpl_stable", "active"), js);
    await deployments.insert(row(aliceProject.id, "dpl_canary", "pending"), js);
    await deployments.insert(row(aliceProject.id, "dpl_watched", "inactive"), js);
    const undecided = JSON.stringify({ kind: "canary", decision: null });
    await deployments.markCanary("dpl_canary", undecided);
    await deployments.setRollout("dpl_watched", JSON.stringify({ kind: "watch", decision: null }));
    assert.deepEqual((await deployments.undecided()).map((d) => d.id).sort(), ["dpl_canary", "dpl_watched"]);
    const canary = await deployments.find(asAlice, aliceProject.id, "dpl_canary");
    assert.equal(canary?.status, "canary");
    assert.equal(canary?.rollout, undecided);
    assert.equal(await deployments.find(asBob, aliceProject.id, "dpl_canary"), undefined, "viewer checked");

    const decided = JSON.stringify({ kind: "canary", decision: "rolled_back" });
    await deployments.markRolledBack(aliceProject.id, "dpl_canary", "rolled back: why", decided, null);
    await deployments.setRollout("dpl_watched", JSON.stringify({ kind: "watch", decision: "promoted" }));
    assert.deepEqual(await deployments.undecided(), []);
    const after = await deployments.find(asAlice, aliceProject.id, "dpl_canary");
    assert.deepEqual(
      [after?.status, after?.error, after?.rollout],
      ["rolled_back", "rolled back: why", decided],
    );
    assert.equal((await deployments.active(aliceProject.id))?.id, "dpl_stable");

    // A plain deploy rolled back: the previous deployment is live again; another project's id is never touched.
    await deployments.activate(aliceProject.id, "dpl_watched", T0 + MINUTE);
    await deployments.markRolledBack(bobProject.id, "dpl_watched", "not bob's", decided, "dpl_stable");
    assert.equal((await deployments.active(aliceProject.id))?.id, "dpl_watched");
    await deployments.markRolledBack(aliceProject.id, "dpl_watched", "crash loop", decided, "dpl_stable");
    assert.equal((await deployments.active(aliceProject.id))?.id, "dpl_stable");
    assert.equal((await deployments.find(asAlice, aliceProject.id, "dpl_watched"))?.status, "rolled_back");
    assert.deepEqual(
      await deployments.prune(aliceProject.id, 1),
      ["dpl_canary"],
      "rolled back ones are pruned",
    );
  });
});
