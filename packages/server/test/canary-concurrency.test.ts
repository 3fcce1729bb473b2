import assert from "node:assert/strict";
import { test } from "node:test";
import { SdkApiError } from "@sdk/client";
import type { RolloutOptions } from "@sdk/protocol";
import { buildScript, waitUntil } from "@sdk/test-helpers";
import { canaryProject, versionScript } from "./helpers/canary.ts";

type Project = Awaited<ReturnType<typeof canaryProject>>;

/** Builds first, so that the uploads can be sent at the same moment. */
async function built(t: Parameters<typeof buildScript>[0], s: Project, script: string) {
  const b = await buildScript(t, script);
  return (rollout?: RolloutOptions) =>
    s.client.api.createDeployment({
      params: { projectId: s.projectId },
      body: { bundle: b.bundle, sourceMap: b.sourceMap, manifest: b.manifest, rollout },
    });
}

const refused = (r: PromiseSettledResult<unknown>) =>
  r.status === "rejected" &&
  r.reason instanceof SdkApiError &&
  r.reason.status === 409 &&
  r.reason.code === "rollout_in_progress";

test("a plain deploy and a canary sent together: one is refused, or the canary runs against the plain one; none is left undecided", async (t) => {
  const s = await canaryProject(t);
  const v2 = await built(t, s, versionScript("v2"));
  const v3 = await built(t, s, versionScript("v3"));
  const [plain, canary] = await Promise.allSettled([
    v2(),
    v3({ canary: { tag: "canary" }, windowSeconds: 3600 }),
  ]);
  t.diagnostic(`plain: ${plain.status}, canary: ${canary.status}`);

  if (canary.status === "fulfilled") {
    // The canary took the slot first (the plain deploy was refused) or came after the plain one was done.
    assert.ok(
      plain.status === "fulfilled" || refused(plain),
      String(plain.status === "rejected" && plain.reason),
    );
    const c = canary.value;
    assert.equal(c.status, "canary");
    const live = await s.live();
    assert.equal(c.rollout?.stableDeploymentId, live, "compared against the deployment that is live");
    if (plain.status === "fulfilled") assert.equal(live, plain.value.id);
    else assert.equal(live, s.stable.id);
    await s.logged(s.member, "v3 up");
    const params = { projectId: s.projectId, deploymentId: c.id };
    const back = await s.client.api.rollBackDeployment({ params });
    assert.equal(back.status, "rolled_back");
    assert.equal(await s.live(), live, "the stable one stays live");
    await s.send(s.member, "after");
    await s.logged(s.member, plain.status === "fulfilled" ? "v2 got after" : "v1 got after");
  } else {
    assert.ok(refused(canary), String(canary.reason));
    assert.equal(plain.status, "fulfilled");
    assert.equal(plain.value.status, "active");
    assert.equal(await s.live(), plain.value.id);
  }
  // No deployment is left in a canary state, and the project takes a canary again.
  const all = await s.client.api.listDeployments({ params: { projectId: s.projectId } });
  assert.deepEqual(
    all.filter((d) => d.status === "canary" || d.status === "pending").map((d) => d.version),
    [],
  );
  const again = await v3({ canary: { tag: "canary" }, windowSeconds: 3600 });
  assert.equal(again.status, "canary");
  assert.equal(again.rollout?.stableDeploymentId, await s.live());
});

test("plain deploys are never refused by another one's watch: the later one ends the earlier one's watch", async (t) => {
  const s = await canaryProject(t);
  const v2 = await built(t, s, versionScript("v2"));
  const v3 = await built(t, s, versionScript("v3"));
  const [a, b] = await Promise.all([v2(), v3()]);
  const live = await s.live();
  assert.ok(live === a.id || live === b.id);
  const [earlier, later] = live === b.id ? [a, b] : [b, a];
  const params = (id: string) => ({ projectId: s.projectId, deploymentId: id });
  await waitUntil(
    async () =>
      (await s.client.api.getDeployment({ params: params(earlier.id) })).rollout?.decision === "promoted",
    20_000,
    "the earlier deploy's watch ended",
  );
  const ended = await s.client.api.getDeployment({ params: params(earlier.id) });
  assert.equal(ended.rollout?.reason, "promoted: no crash loop before the next deploy");
  const watched = await s.client.api.getDeployment({ params: params(later.id) });
  assert.equal(watched.status, "active");
  assert.equal(watched.rollout?.kind, "watch");
  assert.equal(watched.rollout?.decision, null, "the live one is watched");

  // And one more after the watch: it is not refused either.
  const v4 = await s.deployWith(versionScript("v4"));
  assert.equal(v4.status, "active");
  await waitUntil(
    async () =>
      (await s.client.api.getDeployment({ params: params(later.id) })).rollout?.decision === "promoted",
    20_000,
    "the watch ended by the next deploy",
  );
});
