import assert from "node:assert/strict";
import path from "node:path";
import { DatabaseSync } from "node:sqlite";
import { test } from "node:test";
import { buildScript, deployScript as deploy, startServerProcess, waitUntil } from "@sdk/test-helpers";
import { scriptProject } from "./helpers/script-project.ts";
import { raw } from "./helpers/server.ts";

const recursive = (where: "module" | "connect" | "message") => `import { DeviceScript } from "@sdk/device";

function dive(n: number): number {
  return dive(n + 1) + 1;
}
${where === "module" ? "dive(0);" : ""}
export default class Deep extends DeviceScript {
  onDeviceConnect() { ${where === "connect" ? "dive(0);" : 'console.log("deep up");'} }
  onMessage() { ${where === "message" ? "dive(0);" : ""} }
}`;
const fine = `import { DeviceScript } from "@sdk/device";
export default class Fine extends DeviceScript {
  onDeviceConnect() { console.log("fine up"); }
  onMessage(msg) { console.log("fine got " + msg.type); }
}`;
const stackOverflow = /stack overflow[\s\S]*src\/index\.ts:4:\d+/;

async function noPending(s: Awaited<ReturnType<typeof scriptProject>>) {
  const list = await s.client.api.listDeployments({ params: { projectId: s.project.id } });
  assert.deepEqual(
    list.filter((d) => d.status === "pending"),
    [],
  );
}

test("endless recursion at module level fails the deploy with a stack overflow at the TypeScript line", async (t) => {
  const s = await scriptProject(t);
  const d = await deploy(t, s.client, s.project.id, recursive("module"));
  assert.equal(d.status, "failed");
  t.diagnostic(d.error!);
  assert.match(d.error!, stackOverflow);
  await noPending(s);
});

test("endless recursion in onDeviceConnect fails the deploy; the previous version goes on", async (t) => {
  const s = await scriptProject(t);
  const first = await deploy(t, s.client, s.project.id, fine);
  const { device, ids } = await s.onlineDevice();
  await waitUntil(async () => (await s.logs(device.id)).includes("fine up"));
  const d = await deploy(t, s.client, s.project.id, recursive("connect"));
  assert.equal(d.status, "failed");
  t.diagnostic(d.error!);
  assert.match(d.error!, stackOverflow);
  await noPending(s);
  assert.equal(await s.live(), first.id);
  await waitUntil(() => s.running() === first.id);
  await s.client.api.sendDeviceMessage({ params: ids, body: { type: "ping" } });
  await waitUntil(async () => (await s.logs(device.id)).includes("fine got ping"));
});

test("endless recursion in onMessage logs a stack overflow at the TypeScript line; the server answers", async (t) => {
  const s = await scriptProject(t);
  const d = await deploy(t, s.client, s.project.id, recursive("message"));
  assert.equal(d.status, "active");
  const { device, ids } = await s.onlineDevice();
  await waitUntil(async () => (await s.logs(device.id)).includes("deep up"));
  await s.client.api.sendDeviceMessage({ params: ids, body: { type: "go" } });
  await waitUntil(async () => (await s.logs(device.id)).some((l) => /stack overflow/.test(l)));
  const line = (await s.logs(device.id)).find((l) => /stack overflow/.test(l))!;
  assert.match(line, stackOverflow);
  assert.equal((await raw(`${s.url}/health`)).status, 200);
});

test("a server error while a deploy is checked fails the deployment instead of leaving it pending", async (t) => {
  const s = await scriptProject(t);
  await s.client.api.setEnvVar({ params: { projectId: s.project.id, name: "KEY" }, body: { value: "v" } });
  // The stored value no longer decrypts (as with a secret.key that does not belong to the database).
  const sqlite = new DatabaseSync(path.join(s.dataDir, "sdk.db"));
  try {
    sqlite.prepare("UPDATE env_vars SET value_encrypted = ?").run("not a sealed value");
  } finally {
    sqlite.close();
  }
  await assert.rejects(
    deploy(t, s.client, s.project.id, fine),
    (e: any) => e.status === 500 && e.code === "internal_error",
  );
  const [d] = await s.client.api.listDeployments({ params: { projectId: s.project.id } });
  assert.equal(d!.status, "failed");
  assert.match(d!.error!, /the server could not check this deployment/);
});

test("a deploy cut off by kill -9 is failed with a reason when the server starts again", async (t) => {
  // A top level that never ends, with a load deadline long enough to kill the server inside it.
  const first = await startServerProcess(t, undefined, { SCRIPT_LOAD_TIMEOUT_MS: "60000" });
  const anon = first.client();
  const auth = await anon.api.register({
    body: { email: "k@example.com", password: "correct horse battery", issueToken: true },
  });
  const client = first.client(auth.token!.token);
  const project = await client.api.createProject({ body: { name: "p" } });
  const built = await buildScript(
    t,
    `import { DeviceScript } from "@sdk/device";
for (;;) {}
export default class Spin extends DeviceScript {}`,
  );
  const request = client.api
    .createDeployment({
      params: { projectId: project.id },
      body: { bundle: built.bundle, sourceMap: built.sourceMap, manifest: built.manifest },
    })
    .catch((error: unknown) => error);
  const db = path.join(first.dataDir, "sdk.db");
  await waitUntil(() => {
    const sqlite = new DatabaseSync(db, { readOnly: true });
    try {
      return sqlite.prepare("SELECT status FROM deployments").all().length === 1;
    } finally {
      sqlite.close();
    }
  }, 20_000);
  first.child.kill("SIGKILL");
  await first.exited;
  await request;

  const again = await startServerProcess(t, first.dataDir);
  const [deployment] = await again
    .client(auth.token!.token)
    .api.listDeployments({ params: { projectId: project.id } });
  assert.equal(deployment!.status, "failed");
  assert.match(deployment!.error!, /the server stopped while this deployment was being checked/);
});
