import assert from "node:assert/strict";
import { test } from "node:test";
import { buildScript } from "@sdk/test-helpers";
import { TestClock } from "./helpers/clock.ts";
import { scriptProject } from "./helpers/script-project.ts";
import { raw } from "./helpers/server.ts";

const broken = `import { DeviceScript } from "@sdk/device";
throw new Error("broken at load");
export default class Broken extends DeviceScript {}`;
const good = `import { DeviceScript } from "@sdk/device";
export default class Good extends DeviceScript {}`;

test("a module-level endless loop fails the deploy with the timeout", async (t) => {
  const s = await scriptProject(t, { env: { SCRIPT_LOAD_TIMEOUT_MS: "50" } });
  const built = await buildScript(
    t,
    `import { DeviceScript } from "@sdk/device";
for (;;) {}
export default class Spin extends DeviceScript {}`,
  );
  const d = await s.client.api.createDeployment({
    params: { projectId: s.project.id },
    body: { bundle: built.bundle, sourceMap: built.sourceMap, manifest: built.manifest },
  });
  assert.equal(d.status, "failed");
  assert.equal(d.error, "Script execution timeout");
  assert.equal((await raw(`${s.url}/health`)).status, 200);
});

test("repeated failing deploys of one project are paused with 429 and Retry-After; a success resets", async (t) => {
  const clock = new TestClock();
  const s = await scriptProject(t, { clock });
  const other = await s.client.api.createProject({ body: { name: "other" } });
  const bad = await buildScript(t, broken);
  const ok = await buildScript(t, good);
  const body = (b: typeof bad) => ({ bundle: b.bundle, sourceMap: b.sourceMap, manifest: b.manifest });
  const post = (projectId: string, b: typeof bad) =>
    raw(`${s.url}/v1/projects/${projectId}/deployments`, {
      method: "POST",
      headers: { authorization: `Bearer ${s.client.token}` },
      json: body(b),
    });

  for (let i = 0; i < 3; i++) {
    const r = await post(s.project.id, bad);
    assert.equal(r.status, 201);
    assert.equal(r.body.result.status, "failed");
  }
  const refused = await post(s.project.id, ok);
  assert.equal(refused.status, 429, JSON.stringify(refused.body));
  assert.equal(refused.body.error.code, "deploys_throttled");
  assert.equal(refused.headers.get("retry-after"), "10");
  assert.match(refused.body.error.message, /last 3 deploys of this project failed.*try again in 10 s/);
  const versions = await s.client.api.listDeployments({ params: { projectId: s.project.id } });
  assert.equal(versions.length, 3, "a refused deploy stores nothing");

  assert.equal((await post(other.id, ok)).body.result.status, "active", "other projects deploy");

  clock.advance(10_000);
  assert.equal((await post(s.project.id, bad)).body.result.status, "failed");
  const longer = await post(s.project.id, bad);
  assert.equal(longer.status, 429);
  assert.equal(longer.headers.get("retry-after"), "20", "the pause doubles");

  clock.advance(20_000);
  assert.equal((await post(s.project.id, ok)).body.result.status, "active");
  for (let i = 0; i < 3; i++)
    assert.equal((await post(s.project.id, bad)).status, 201, "the count restarted");
});

test("parallel failing deploys cannot pass the throttle together: deploys still loading count", async (t) => {
  const s = await scriptProject(t);
  const bad = await buildScript(t, broken);
  const post = () =>
    raw(`${s.url}/v1/projects/${s.project.id}/deployments`, {
      method: "POST",
      headers: { authorization: `Bearer ${s.client.token}` },
      json: { bundle: bad.bundle, sourceMap: bad.sourceMap, manifest: bad.manifest },
    });
  const answers = await Promise.all(Array.from({ length: 8 }, post));
  const statuses = answers.map((r) => r.status).sort();
  assert.deepEqual(statuses, [201, 201, 201, 429, 429, 429, 429, 429], JSON.stringify(statuses));
  const refused = answers.find((r) => r.status === 429)!;
  assert.equal(refused.body.error.code, "deploys_throttled");
  assert.ok(Number(refused.headers.get("retry-after")) > 0);
  const versions = await s.client.api.listDeployments({ params: { projectId: s.project.id } });
  assert.equal(versions.length, 3, "only the deploys let through ran a trial load");
});
