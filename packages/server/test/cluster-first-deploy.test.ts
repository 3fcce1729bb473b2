// Three instances of one cluster in this process (one PostgreSQL schema, one NATS): a project's
// first deployment, made through one instance, runs for the boards connected to the others.
import assert from "node:assert/strict";
import { test } from "node:test";
import { deployScript, waitUntil } from "@sdk/test-helpers";
import { clusterEnv, startInstance } from "./helpers/cluster.ts";
import { simulatedBoard } from "./helpers/script-project.ts";

const script = `import { DeviceScript } from "@sdk/device";
export default class Hello extends DeviceScript {
  onDeviceConnect() { console.log("up"); }
  onMessage(msg) { console.log("got " + msg.type); }
}`;

test("cluster: the first deployment of a project, made through A, runs for the boards already connected to B and C", {
  timeout: 60_000,
}, async (t) => {
  const env = await clusterEnv(t);
  if (!env) return;
  const a = await startInstance(t, env, "i-a");
  const b = await startInstance(t, env, "i-b");
  const c = await startInstance(t, env, "i-c");
  const { client } = await a.user();
  const project = await client.api.createProject({ body: { name: "p" } });

  const boards = [];
  for (const server of [b, c]) {
    const { device, credentials } = await client.api.createDevice({
      params: { projectId: project.id },
      body: { name: `on ${server.server.cluster?.instanceId}`, board: "pico_w" },
    });
    const sim = simulatedBoard(t, new URL(server.url).host, credentials).start();
    await sim.waitFor("connected");
    boards.push({ ids: { projectId: project.id, deviceId: device.id }, server });
  }
  const logs = async (ids: { projectId: string; deviceId: string }) =>
    (await client.api.listDeviceLogs({ params: ids, query: { limit: 50 } })).map((l) => l.message).reverse();

  // No deployment yet: a message has no script to go to.
  await assert.rejects(
    client.api.sendDeviceMessage({ params: boards[0]!.ids, body: { type: "early" } }),
    (e: any) => e.code === "no_script",
  );

  const deployment = await deployScript(t, client, project.id, script);
  assert.equal(deployment.status, "active");
  for (const { ids, server } of boards) {
    const where = server.server.cluster?.instanceId;
    await waitUntil(
      async () => (await logs(ids)).includes("up"),
      10_000,
      `the script started for the board on ${where}`,
    );
    assert.equal(server.server.services.scripts.runningDeployment(project.id), deployment.id);
    // A message through A reaches the script on the board's instance.
    await client.api.sendDeviceMessage({ params: ids, body: { type: "ping" } });
    await waitUntil(
      async () => (await logs(ids)).includes("got ping"),
      10_000,
      `the script on ${where} answered`,
    );
  }
  assert.equal(
    a.server.services.scripts.runningDeployment(project.id),
    null,
    "no board on A: nothing runs there",
  );
});
