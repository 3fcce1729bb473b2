import assert from "node:assert/strict";
import { test } from "node:test";
import { SdkApiError } from "@sdk/client";
import { buildScript } from "@sdk/test-helpers";
import { canaryProject, versionScript } from "./helpers/canary.ts";

const rejects = async (promise: Promise<unknown>, status: number, code: string) => {
  await assert.rejects(promise, (e: unknown) => {
    assert.ok(e instanceof SdkApiError, String(e));
    assert.equal(e.status, status);
    assert.equal(e.code, code);
    return true;
  });
};

test("a percentage canary picks at least one connected device; rolled back by hand, its devices go back", async (t) => {
  const s = await canaryProject(t);
  const d = await s.deployWith(versionScript("v2"), { canary: { percent: 1 }, windowSeconds: 3600 });
  assert.equal(d.status, "canary");
  assert.equal(d.rollout?.devices.length, 1);
  const picked = d.rollout!.devices[0] === s.member.device.id ? s.member : s.other;
  const notPicked = picked === s.member ? s.other : s.member;
  await s.logged(picked, "v2 up");
  const during = await s.deployment(d.id);
  assert.equal(during.rollout?.health.canary.devices, 1);
  assert.equal(during.rollout?.health.stable.devices, 1);
  assert.ok((during.rollout?.health.canary.connects ?? 0) >= 1, "live figures while in the window");

  const params = { projectId: s.projectId, deploymentId: d.id };
  const back = await s.client.api.rollBackDeployment({ params });
  assert.equal(back.status, "rolled_back");
  assert.equal(back.rollout?.decision, "rolled_back");
  assert.match(back.error ?? "", /^rolled back by hand/);
  await s.logged(picked, /canary\) rolled back by hand/);
  await s.send(picked, "ping");
  await s.logged(picked, "v1 got ping");
  assert.equal(await s.live(), s.stable.id);
  assert.ok(!(await s.logs(notPicked.device.id)).includes("v2 up"));
  await rejects(s.client.api.rollBackDeployment({ params }), 409, "conflict");
  await rejects(s.client.api.promoteDeployment({ params }), 409, "conflict");
  await rejects(
    s.client.api.promoteDeployment({ params: { projectId: s.projectId, deploymentId: s.stable.id } }),
    409,
    "conflict",
  );
});

test("409s: no connected device with the tag, a second canary or a plain deploy during a canary; promoted by hand", async (t) => {
  const s = await canaryProject(t);
  const before = (await s.client.api.listDeployments({ params: { projectId: s.projectId } })).length;
  await rejects(s.deployWith(versionScript("v2"), { canary: { tag: "nobody" } }), 409, "no_canary_devices");
  assert.equal(
    (await s.client.api.listDeployments({ params: { projectId: s.projectId } })).length,
    before,
    "no deployment is made",
  );
  const d = await s.deployWith(versionScript("v2"), { canary: { tag: "canary" }, windowSeconds: 3600 });
  assert.equal(d.status, "canary");
  await rejects(s.deployWith(versionScript("v3"), { canary: { percent: 50 } }), 409, "rollout_in_progress");
  await rejects(s.deployWith(versionScript("v3")), 409, "rollout_in_progress");

  // Another user sees no such deployment.
  const stranger = (await s.user()).client;
  const params = { projectId: s.projectId, deploymentId: d.id };
  await rejects(stranger.api.promoteDeployment({ params }), 404, "not_found");
  await rejects(stranger.api.rollBackDeployment({ params }), 404, "not_found");
  // Nor is a stranger told that the project has a canary running.
  const built = await buildScript(t, versionScript("v9"));
  await rejects(
    stranger.api.createDeployment({
      params: { projectId: s.projectId },
      body: { bundle: built.bundle, sourceMap: built.sourceMap, manifest: built.manifest },
    }),
    404,
    "not_found",
  );
  await rejects(
    stranger.api.activateDeployment({
      params: { projectId: s.projectId, deploymentId: s.stable.id },
      body: {},
    }),
    404,
    "not_found",
  );

  await s.logged(s.member, "v2 up");
  const promoted = await s.client.api.promoteDeployment({ params });
  assert.equal(promoted.status, "active");
  assert.equal(promoted.rollout?.decision, "promoted");
  assert.match(promoted.rollout?.reason ?? "", /^promoted by hand/);
  assert.equal(await s.live(), d.id);
  await s.logged(s.other, "v2 up");
  await s.send(s.other, "ping");
  await s.logged(s.other, "v2 got ping");
});

test("an earlier deployment can be activated again as a canary", async (t) => {
  const s = await canaryProject(t);
  const v2 = await s.deployWith(versionScript("v2"));
  assert.equal(v2.status, "active");
  assert.equal(v2.rollout?.kind, "watch");
  await s.logged(s.member, "v2 up");
  const again = await s.client.api.activateDeployment({
    params: { projectId: s.projectId, deploymentId: s.stable.id },
    body: { canary: { tag: "canary" }, windowSeconds: 3600 },
  });
  assert.equal(again.status, "canary");
  assert.equal(again.rollout?.stableDeploymentId, v2.id);
  await s.send(s.member, "m");
  await s.send(s.other, "o");
  await s.logged(s.member, "v1 got m");
  await s.logged(s.other, "v2 got o");
});

test("during the window, a tagged device that connects runs the canary; env changes reach both versions", async (t) => {
  const s = await canaryProject(t);
  const envScript = (name: string) => `import { DeviceScript } from "@sdk/device";
export default class E extends DeviceScript {
  onDeviceConnect() { console.log("${name} up"); }
  onMessage(msg) { console.log("${name} sees " + this.env.COLOR); }
}`;
  assert.equal((await s.deployWith(envScript("e1"))).status, "active");
  await s.logged(s.other, "e1 up");
  const late = await s.addDevice("late");
  await s.client.api.addDeviceTags({ params: late.ids, body: { tags: ["canary"] } });
  const d = await s.deployWith(envScript("e2"), { canary: { tag: "canary" }, windowSeconds: 3600 });
  assert.equal(d.status, "canary");
  assert.deepEqual(d.rollout?.devices, [s.member.device.id, late.device.id].sort());
  late.sim.start();
  await late.sim.waitFor("connected");
  await s.logged(late, "e2 up");

  await s.client.api.setEnvVar({ params: { projectId: s.projectId, name: "COLOR" }, body: { value: "red" } });
  await s.send(late, "m");
  await s.send(s.other, "o");
  await s.logged(late, "e2 sees red");
  await s.logged(s.other, "e1 sees red");
  const during = await s.deployment(d.id);
  assert.equal(during.rollout?.health.canary.devices, 2);
});
