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
      await c.repos.deployments.insert(row(aliceProject.id, `dpl_a${i}`, status));
    await c.repos.deployments.insert(row(bobProject.id, "dpl_b0", "inactive"));

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
  });

  test("failInterrupted fails only deployments pending from before the given time", async (t) => {
    const c = await setup(t);
    if (!c) return;
    const { aliceProject, asAlice } = await tenants(c);
    await c.repos.deployments.insert(row(aliceProject.id, "dpl_old", "pending", T0));
    await c.repos.deployments.insert(row(aliceProject.id, "dpl_new", "pending", T0 + 2 * MINUTE));
    await c.repos.deployments.failInterrupted(T0 + MINUTE);
    const byId = new Map(
      (await c.repos.deployments.list(asAlice, aliceProject.id)).map((d) => [d.id, d] as const),
    );
    assert.equal(byId.get("dpl_old")!.status, "failed");
    assert.match(byId.get("dpl_old")!.error!, /the server stopped while this deployment was being checked/);
    assert.equal(byId.get("dpl_new")!.status, "pending", "another instance may still be checking it");
  });
});
