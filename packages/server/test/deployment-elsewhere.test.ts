import assert from "node:assert/strict";
import { test } from "node:test";
import { deployScript as deploy, waitUntil } from "@sdk/test-helpers";
import { createRepositories } from "../src/repositories/index.ts";
import { scriptProject } from "./helpers/script-project.ts";

const version = (n: number) => `import { DeviceScript } from "@sdk/device";
export default class V${n} extends DeviceScript {
  onDeviceConnect() { console.log("v${n} up"); }
  onDeviceDisconnect() { console.log("v${n} down"); }
}`;

test("a deployment made live by another instance: the scripts running here move to it, from the database; a local activation loads once", async (t) => {
  const s = await scriptProject(t);
  const v1 = await deploy(t, s.client, s.project.id, version(1));
  const v2 = await deploy(t, s.client, s.project.id, version(2));
  const { device } = await s.runningDevice();
  const scripts = s.server.services.scripts;
  const count = async (line: string) => (await s.logs(device.id)).filter((l) => l === line).length;
  await waitUntil(async () => (await count("v2 up")) === 1, 10_000, "v2 running");

  // Another instance activated v1: the database says so, and its deployment.activated arrives.
  const repos = createRepositories(s.server.database.db, s.server.database.batcher);
  await repos.deployments.activate(s.project.id, v1.id, Date.now());
  await s.server.bus.publish("deployment.activated", {
    actorId: s.auth.user.id,
    projectId: s.project.id,
    deploymentId: v1.id,
    version: v1.version,
  });
  await waitUntil(() => scripts.runningDeployment(s.project.id) === v1.id, 10_000, "v1 running here");
  await waitUntil(async () => (await count("v1 up")) === 1, 10_000, "v1's instance started");
  assert.equal(await count("v2 down"), 1, "v2's instance ended first");

  // An event for a deployment that is not (or no longer) the live one changes nothing.
  await s.server.bus.publish("deployment.activated", {
    actorId: s.auth.user.id,
    projectId: s.project.id,
    deploymentId: v2.id,
    version: v2.version,
  });
  await scripts.settled(s.project.id);
  assert.equal(scripts.runningDeployment(s.project.id), v1.id, "the database's live one runs");

  // Activated here: the swap is the activation's own; its event (heard here too) loads nothing more.
  await s.client.api.activateDeployment({ params: { projectId: s.project.id, deploymentId: v2.id } });
  await scripts.settled(s.project.id);
  assert.equal(scripts.runningDeployment(s.project.id), v2.id);
  await waitUntil(async () => (await count("v2 up")) === 2, 10_000, "v2 again");
  assert.deepEqual(
    (await s.logs(device.id)).filter((l) => /^v\d (up|down)$/.test(l)),
    ["v2 up", "v2 down", "v1 up", "v1 down", "v2 up"],
  );
});
