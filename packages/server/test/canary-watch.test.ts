import assert from "node:assert/strict";
import { test } from "node:test";
import { buildScript, deployScript, startTestServer, tempDir, waitUntil } from "@sdk/test-helpers";
import { canaryProject, versionScript } from "./helpers/canary.ts";
import { scriptProject } from "./helpers/script-project.ts";

const throwsOnConnect = `import { DeviceScript } from "@sdk/device";
export default class Loop extends DeviceScript {
  onDeviceConnect() { console.log("loop up"); throw new Error("crash"); }
}`;

test("a plain deploy whose onDeviceConnect always throws is rolled back at once; the previous one stays live", async (t) => {
  const s = await canaryProject(t);
  const d = await s.deployWith(throwsOnConnect);
  assert.equal(d.status, "rolled_back");
  assert.equal(d.rollout?.kind, "watch");
  assert.equal(d.rollout?.decision, "rolled_back");
  assert.match(d.error ?? "", /^rolled back: every onDeviceConnect threw \(2 of 2\)/);
  assert.equal(await s.live(), s.stable.id);
  await s.send(s.other, "ping");
  await s.logged(s.other, "v1 got ping");
});

test("with rollback: false a crash-looping plain deploy stays live", async (t) => {
  const s = await canaryProject(t);
  const d = await s.deployWith(throwsOnConnect, { rollback: false });
  assert.equal(d.status, "active");
  assert.equal(d.rollout?.kind, "watch");
  assert.equal(d.rollout?.rollback, false);
  assert.equal(await s.live(), d.id);
  await s.logged(s.member, "loop up");
});

test("a plain deploy that works is watched for its first minute", async (t) => {
  const s = await canaryProject(t);
  const d = await s.deployWith(versionScript("v2"));
  assert.equal(d.status, "active");
  assert.equal(d.rollout?.kind, "watch");
  assert.equal(d.rollout?.decision, null);
  assert.equal(d.rollout?.stableDeploymentId, s.stable.id);
  assert.equal(d.rollout?.windowSeconds, 60);
});

test("a canary cut off by a restart is rolled back at boot; the stable version stays live", async (t) => {
  const dataDir = tempDir(t);
  const s = await canaryProject(t, { dataDir });
  const d = await s.deployWith(versionScript("v2"), { canary: { tag: "canary" }, windowSeconds: 3600 });
  assert.equal(d.status, "canary");
  await s.logged(s.member, "v2 up");
  await s.server.close();

  const second = await startTestServer(t, { dataDir });
  const api = second.client(s.auth.token!.token).api;
  const after = await api.getDeployment({ params: { projectId: s.projectId, deploymentId: d.id } });
  assert.equal(after.status, "rolled_back");
  assert.equal(after.error, "the server restarted during the canary window");
  assert.equal(after.rollout?.decision, "rolled_back");
  const live = (await api.listDeployments({ params: { projectId: s.projectId } })).find(
    (x) => x.status === "active",
  );
  assert.equal(live?.id, s.stable.id);
  const memberLog = await api.listDeviceLogs({ params: s.member.ids, query: { limit: 200 } });
  assert.ok(
    memberLog.some((l) =>
      /\(canary\) rolled back: the server restarted during the canary window/.test(l.message),
    ),
    "the member's log says so",
  );
});

test("a plain deploy whose onDeviceConnect throws for the devices connecting in its first minute is rolled back", async (t) => {
  const s = await scriptProject(t);
  const projectId = s.project.id;
  const v1 = await deployScript(t, s.client, projectId, versionScript("v1"));
  const built = await buildScript(t, throwsOnConnect);
  const d = await s.client.api.createDeployment({
    params: { projectId },
    body: { bundle: built.bundle, sourceMap: built.sourceMap, manifest: built.manifest },
  });
  assert.equal(d.status, "active", "no device connected at the trial");
  const { device } = await s.onlineDevice();
  const params = { projectId, deploymentId: d.id };
  await waitUntil(async () => (await s.client.api.getDeployment({ params })).status === "rolled_back");
  const after = await s.client.api.getDeployment({ params });
  assert.match(after.error ?? "", /^rolled back: every onDeviceConnect threw \(1 of 1\) in the first minute/);
  assert.equal(await s.live(), v1.id);
  await waitUntil(async () => (await s.logs(device.id)).includes("v1 up"));
});

test("a project's first deployment goes live even if every onDeviceConnect throws (there is nothing to stay on)", async (t) => {
  const s = await scriptProject(t);
  const projectId = s.project.id;
  const { device } = await s.onlineDevice();
  const built = await buildScript(t, throwsOnConnect);
  const d = await s.client.api.createDeployment({
    params: { projectId },
    body: { bundle: built.bundle, sourceMap: built.sourceMap, manifest: built.manifest },
  });
  assert.equal(d.status, "active");
  assert.equal(d.rollout?.kind, "watch");
  assert.equal(await s.live(), d.id);
  await waitUntil(async () => (await s.logs(device.id)).includes("loop up"));
});
