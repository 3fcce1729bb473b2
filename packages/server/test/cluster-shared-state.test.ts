// Two instances of a cluster in this process (NATS_URL and one PostgreSQL database): the state
// that was per process is shared. The sign-in rate limit holds across instances, a firmware
// release uploaded through one downloads through the other, and canaries are refused.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { type TestContext, test } from "node:test";
import { fakeReleaseUf2 } from "@sdk/test-helpers";
import { answers, skipOrFail } from "./helpers/mqtt.ts";
import { postgresUrl } from "./helpers/postgres.ts";
import { raw, startTestServer } from "./helpers/server.ts";

const password = "correct horse battery";

async function twoInstances(t: TestContext) {
  const url = await postgresUrl(t);
  if (!url) return null;
  if (!(await answers(4222))) {
    skipOrFail(t, "no NATS server answers on 127.0.0.1:4222");
    return null;
  }
  const env = {
    DATABASE_URL: url,
    NATS_URL: "nats://127.0.0.1:4222",
    CLUSTER_NAME: `t${randomBytes(4).toString("hex")}`,
    RATE_LIMIT_MAX_ATTEMPTS: "3",
    RATE_LIMIT_WINDOW_SECONDS: "60",
  };
  const a = await startTestServer(t, { env: { ...env, INSTANCE_ID: "a" } });
  const b = await startTestServer(t, { env: { ...env, INSTANCE_ID: "b" } });
  return { a, b };
}

test("two instances: one sign-in rate limit, firmware uploaded through A downloads through B", async (t) => {
  const s = await twoInstances(t);
  if (!s) return;
  const { a, b } = s;
  const { client: admin } = await a.user("admin@example.com", password);
  const login = (url: string, pw: string) =>
    raw(`${url}/v1/auth/login`, { method: "POST", json: { email: "admin@example.com", password: pw } });

  assert.equal((await login(a.url, "wrong password")).status, 401);
  assert.equal((await login(b.url, "wrong password")).status, 401);
  assert.equal((await login(a.url, "wrong password")).status, 401);
  for (const url of [b.url, a.url]) {
    const limited = await login(url, password);
    assert.equal(limited.status, 429, "three failures through two instances reach the limit");
    assert.ok(Number(limited.headers.get("retry-after")) >= 1);
  }

  const uf2 = fakeReleaseUf2({ board: "pico_w" });
  await admin.uploadFirmware({ version: "3.1.0", board: "pico_w", bytes: uf2 });
  const throughB = b.client((await admin.api.createToken({ body: { name: "b" } })).token);
  assert.deepEqual(
    (await throughB.api.listFirmware()).map((r) => r.version),
    ["3.1.0"],
  );
  assert.deepEqual(
    Buffer.from(await throughB.downloadFirmware({ version: "3.1.0", board: "pico_w" })),
    Buffer.from(uf2),
  );

  const project = await throughB.api.createProject({ body: { name: "p" } });
  const canary = await raw(`${b.url}/v1/projects/${project.id}/deployments`, {
    method: "POST",
    headers: { authorization: `Bearer ${(await admin.api.createToken({ body: { name: "c" } })).token}` },
    json: {
      bundle: "export default class {}",
      manifest: { board: "pico_w", libraryVersion: "0.1.0" },
      rollout: { canary: { percent: 10 } },
    },
  });
  assert.equal(canary.status, 409, JSON.stringify(canary.body));
  assert.equal(canary.body.error.code, "canary_needs_one_instance");
});
