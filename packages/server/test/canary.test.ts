import assert from "node:assert/strict";
import { test } from "node:test";
import { waitUntil } from "@sdk/test-helpers";
import { allowLoopback, receiver } from "./helpers/alerts.ts";
import { canaryProject, versionScript } from "./helpers/canary.ts";

/** Logs a marker, then throws, in every onMessage. */
const throwsOnMessage = `import { DeviceScript } from "@sdk/device";
export default class Bad extends DeviceScript {
  onDeviceConnect() { console.log("bad up"); }
  onMessage(msg) { console.log("bad ran " + msg.type); throw new Error("boom"); }
}`;

test("a good canary on a tag runs on its devices only, is promoted at the window's end, then runs on every device", async (t) => {
  const s = await canaryProject(t);
  // A window that does not end by itself: the test ends it (nothing depends on the machine's speed).
  const d = await s.deployWith(versionScript("v2"), { canary: { tag: "canary" }, windowSeconds: 3600 });
  assert.equal(d.status, "canary");
  assert.equal(d.rollout?.kind, "canary");
  assert.deepEqual(d.rollout?.devices, [s.member.device.id]);
  assert.equal(d.rollout?.stableDeploymentId, s.stable.id);
  assert.equal(d.rollout?.decision, null);
  assert.equal(await s.live(), s.stable.id, "the stable deployment stays active during the window");

  await s.logged(s.member, "v2 up");
  await s.send(s.member, "ping");
  await s.send(s.other, "ping");
  await s.logged(s.member, "v2 got ping");
  await s.logged(s.other, "v1 got ping");

  await s.server.services.rollouts.endWindowForTests(s.projectId);
  const promoted = await s.deployment(d.id);
  assert.equal(promoted.status, "active");
  assert.equal(promoted.rollout?.decision, "promoted");
  assert.match(promoted.rollout?.reason ?? "", /^promoted: /);
  assert.equal(promoted.rollout?.health.canary.devices, 1);
  assert.ok((promoted.rollout?.health.canary.calls ?? 0) >= 2, "onDeviceConnect and onMessage counted");
  assert.equal((await s.deployment(s.stable.id)).status, "inactive");
  await s.logged(s.other, "v2 up");
  await s.send(s.other, "pong");
  await s.logged(s.other, "v2 got pong");
  await s.logged(s.member, /canary\) promoted/);
});

test("a canary whose window ends by its timer is promoted (no assumption about what happens before)", async (t) => {
  const s = await canaryProject(t);
  const d = await s.deployWith(versionScript("v2"), { canary: { tag: "canary" }, windowSeconds: 1 });
  const promoted = await s.reaches(d.id, "active");
  assert.equal(promoted.rollout?.decision, "promoted");
  assert.match(promoted.rollout?.reason ?? "", /^promoted: within the thresholds for 1 s on 1 device/);
  await s.logged(s.other, "v2 up");
});

test("a canary that throws in every onMessage is rolled back early; the stable devices never ran it; an alert says why", async (t) => {
  const hook = await receiver(t);
  const s = await canaryProject(t, { env: allowLoopback });
  const params = { projectId: s.projectId };
  await s.client.api.createWebhook({ params, body: { url: hook.url } });
  await s.client.api.createAlertRule({ params, body: { kind: "deployment" } });

  const d = await s.deployWith(throwsOnMessage, { canary: { tag: "canary" }, windowSeconds: 3600 });
  assert.equal(d.status, "canary");
  await s.logged(s.member, "bad up");
  for (const type of ["a", "b", "c"]) await s.send(s.member, type);
  await s.send(s.other, "x");

  const rolledBack = await s.reaches(d.id, "rolled_back");
  t.diagnostic(rolledBack.error ?? "");
  assert.match(
    rolledBack.error ?? "",
    /^rolled back: 3 of 4 handler calls failed \(75 %\) against 0 of \d+ \(0 %\) on the stable version$/,
  );
  assert.equal(rolledBack.rollout?.decision, "rolled_back");
  assert.equal(rolledBack.rollout?.reason, rolledBack.error);
  assert.ok(rolledBack.rollout?.decidedAt);
  assert.equal(rolledBack.rollout?.health.canary.errors, 3);
  assert.equal(await s.live(), s.stable.id);

  await s.logged(s.member, /canary\) rolled back: 3 of 4/);
  await s.send(s.member, "after");
  await s.logged(s.member, "v1 got after");
  await s.logged(s.other, "v1 got x");
  const otherLog = await s.logs(s.other.device.id);
  assert.deepEqual(
    otherLog.filter((l) => l.startsWith("bad")),
    [],
    "the stable device never ran the canary",
  );

  await hook.waitFor("deployment.rolled_back");
  const alert = hook.of("deployment.rolled_back")[0]!.body;
  assert.equal(alert.deployment.id, d.id);
  assert.match(alert.message, /3 of 4 handler calls failed/);
});

test("a canary whose scripts stop themselves (stack overflow) is rolled back, not restarted", async (t) => {
  const s = await canaryProject(t);
  const d = await s.deployWith(
    `import { DeviceScript } from "@sdk/device";
function dive(n: number): number { return dive(n + 1) + 1; }
export default class Deep extends DeviceScript {
  onDeviceConnect() { console.log("deep up"); }
  onMessage() { dive(0); }
}`,
    { canary: { tag: "canary" }, windowSeconds: 3600 },
  );
  assert.equal(d.status, "canary");
  await s.logged(s.member, "deep up");
  await s.send(s.member, "go");
  const after = await s.reaches(d.id, "rolled_back");
  assert.match(after.error ?? "", /^rolled back: the canary's scripts stopped themselves \(.*stack overflow/);
  await s.send(s.member, "again");
  await s.logged(s.member, "v1 got again");
});

test("a crash of the scripts' worker thread restarts the canary for its members; its window goes on", async (t) => {
  // One worker thread: the canary and the stable version both run on the one that crashes.
  const s = await canaryProject(t, { env: { SCRIPT_WORKERS: "1" } });
  const d = await s.deployWith(versionScript("v2"), { canary: { tag: "canary" }, windowSeconds: 3600 });
  assert.equal(d.status, "canary");
  await s.logged(s.member, "v2 up");
  s.server.services.scripts.crashWorkerForTests(s.projectId);
  const twice = (id: string, line: string) =>
    waitUntil(async () => (await s.logs(id)).filter((l) => l === line).length === 2, 20_000, line);
  await twice(s.member.device.id, "v2 up");
  await twice(s.other.device.id, "v1 up");
  await s.send(s.member, "after");
  await s.logged(s.member, "v2 got after");
  await s.send(s.other, "after");
  await s.logged(s.other, "v1 got after");
  assert.equal((await s.deployment(d.id)).status, "canary");
});
