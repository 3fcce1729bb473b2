import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { buildScript, deployScript as deploy, waitUntil } from "@sdk/test-helpers";
import { scriptProject, simulatedBoard } from "./helpers/script-project.ts";
import { raw, startTestServer } from "./helpers/server.ts";

const script = `import { DeviceScript } from "@sdk/device";
import { greeting } from "./greeting.ts";
export default class Hello extends DeviceScript {
  onDeviceConnect() { console.log(greeting); }
}
`;

test("a deployment's sources come from its source map and its bundle downloads; other users get 404", async (t) => {
  const s = await scriptProject(t);
  const built = await buildScript(t, script, {
    files: { "src/greeting.ts": 'export const greeting = "hello";\n' },
  });
  const d = await s.client.api.createDeployment({
    params: { projectId: s.project.id },
    body: { bundle: built.bundle, sourceMap: built.sourceMap, manifest: built.manifest },
  });
  const ids = { projectId: s.project.id, deploymentId: d.id };
  const { files } = await s.client.api.getDeploymentSource({ params: ids });
  assert.deepEqual(
    files.map((f) => f.path).sort(),
    ["src/greeting.ts", "src/index.ts"],
    "the project's files, not the library",
  );
  assert.equal(files.find((f) => f.path === "src/index.ts")!.text, script);

  const bytes = await s.client.downloadDeploymentBundle(ids);
  assert.equal(new TextDecoder().decode(bytes), built.bundle);
  const response = await raw(`${s.url}/v1/projects/${s.project.id}/deployments/${d.id}/bundle`, {
    headers: { authorization: `Bearer ${s.client.token}` },
  });
  assert.equal(response.headers.get("content-disposition"), `attachment; filename="p-v1.js"`);

  const { client: stranger } = await s.user();
  for (const call of [
    () => stranger.api.getDeploymentSource({ params: ids }),
    () => stranger.downloadDeploymentBundle(ids),
  ]) {
    await assert.rejects(call, (e: any) => e.status === 404 && e.code === "not_found");
  }
});

test("each project keeps its newest DEPLOYMENTS_KEPT deployments and always the live one", async (t) => {
  const s = await scriptProject(t, { env: { DEPLOYMENTS_KEPT: "2" } });
  assert.equal((await s.anon.api.serverInfo()).deploymentsKept, 2);
  const good = (n: number) =>
    `import { DeviceScript } from "@sdk/device";\nexport default class V${n} extends DeviceScript {}\n`;
  const broken = `import { DeviceScript } from "@sdk/device";
throw new Error("broken");
export default class B extends DeviceScript {}`;
  const v1 = await deploy(t, s.client, s.project.id, good(1));
  const v2 = await deploy(t, s.client, s.project.id, good(2));
  await s.client.api.activateDeployment({ params: { projectId: s.project.id, deploymentId: v1.id } });
  await deploy(t, s.client, s.project.id, broken);
  await deploy(t, s.client, s.project.id, broken);
  const list = await s.client.api.listDeployments({ params: { projectId: s.project.id } });
  assert.deepEqual(
    list.map((d) => [d.version, d.status]),
    [
      [4, "failed"],
      [3, "failed"],
      [1, "active"],
    ],
  );
  await assert.rejects(
    s.client.downloadDeploymentBundle({ projectId: s.project.id, deploymentId: v2.id }),
    (e: any) => e.status === 404,
  );
  assert.equal(
    fs.existsSync(path.join(s.dataDir, "projects", s.project.id, "deployments", v2.id)),
    false,
    "its files are gone too",
  );
});

test("bundles are in the database; at boot those an older server kept only on disk are copied in", async (t) => {
  const s = await scriptProject(t);
  const built = await buildScript(t, script, {
    files: { "src/greeting.ts": 'export const greeting = "hello from disk";\n' },
  });
  const d = await s.client.api.createDeployment({
    params: { projectId: s.project.id },
    body: { bundle: built.bundle, sourceMap: built.sourceMap, manifest: built.manifest },
  });
  const ids = { projectId: s.project.id, deploymentId: d.id };
  const dir = path.join(s.dataDir, "projects", s.project.id, "deployments", d.id);
  assert.equal(fs.existsSync(dir), false, "nothing written to disk");
  const db = s.server.database.db;
  assert.equal(
    (
      await db
        .selectFrom("deploymentBundles")
        .select("bundle")
        .where("deploymentId", "=", d.id)
        .executeTakeFirst()
    )?.bundle,
    built.bundle,
  );

  // As a server before 0009 left it: the bundle and its source map on disk only.
  await db.deleteFrom("deploymentBundles").execute();
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, "script.js"), built.bundle);
  fs.writeFileSync(path.join(dir, "script.js.map"), built.sourceMap);
  await s.server.close();

  const next = await startTestServer(t, { dataDir: s.dataDir });
  const client = next.client(s.client.token);
  assert.equal(new TextDecoder().decode(await client.downloadDeploymentBundle(ids)), built.bundle);
  const { files } = await client.api.getDeploymentSource({ params: ids });
  assert.deepEqual(files.map((f) => f.path).sort(), ["src/greeting.ts", "src/index.ts"]);
  assert.equal(await next.server.services.deployments.importBundles(), 0, "copied once");

  // The imported bundle runs for a device that connects.
  const { device, credentials } = await client.api.createDevice({
    params: { projectId: s.project.id },
    body: { name: "d", board: "pico_w" },
  });
  const sim = simulatedBoard(t, new URL(next.url).host, credentials);
  sim.start();
  await sim.waitFor("connected");
  await waitUntil(
    async () =>
      (await client.api.listDeviceLogs({ params: { projectId: s.project.id, deviceId: device.id } })).some(
        (l) => l.message === "hello from disk",
      ),
    10_000,
    "the script's log line",
  );
});
