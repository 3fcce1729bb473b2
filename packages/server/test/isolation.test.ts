import assert from "node:assert/strict";
import { test } from "node:test";
import { SdkApiError, type SdkClient } from "@sdk/client";
import { type Endpoint, type EndpointName, endpoints } from "@sdk/protocol";
import { startTestServer } from "./helpers/server.ts";

/** A valid body for every project-scoped endpoint that takes one. A new endpoint must be added here. */
const sampleBodies: Partial<Record<EndpointName, unknown>> = {
  renameProject: { name: "stolen" },
  createDevice: { name: "intruder", board: "pico_w" },
  renameDevice: { name: "stolen" },
  setEnvVar: { value: "overwritten" },
  sendDeviceCommand: { type: "gpio_write", args: { pin: 2, value: 1 } },
  sendDeviceMessage: { type: "hello" },
  createDeployment: {
    bundle: "export default {}",
    manifest: { board: "pico_w", entities: [], libraryVersion: "0.1.0" },
  },
  activateDeployment: { canary: { percent: 50 } },
  setRetention: { logMaxEntries: 10 },
  setDeviceTags: { tags: ["stolen"] },
  addDeviceTags: { tags: ["stolen"] },
  sendTagCommand: { tag: "all", type: "gpio_write", args: { pin: 2, value: 1 } },
  sendTagMessage: { tag: "all", message: { type: "hello" } },
  createDevices: { devices: [{ name: "intruder", board: "pico_w" }] },
  createAlertRule: { kind: "deployment" },
  updateAlertRule: { kind: "deployment" },
  createWebhook: { url: "https://hooks.example.com/sdk" },
};

const projectScoped = (Object.entries(endpoints) as [EndpointName, Endpoint][]).filter(([, e]) =>
  e.path.includes(":projectId"),
);

async function snapshot(client: SdkClient, projectId: string) {
  return {
    project: await client.api.getProject({ params: { projectId } }),
    deployments: await client.api.listDeployments({ params: { projectId } }),
    devices: await client.api.listDevices({ params: { projectId } }),
    env: await client.api.listEnvVars({ params: { projectId } }),
    retention: await client.api.getRetention({ params: { projectId } }),
  };
}

test("every project-scoped endpoint answers 404 to another user and changes nothing", async (t) => {
  assert.ok(projectScoped.length >= 10, "the endpoint table has the project-scoped routes");
  const { user } = await startTestServer(t);
  const { client: alice } = await user("alice@example.com"); // admin (first account)
  const { client: bob } = await user("bob@example.com");
  const { client: carol } = await user("carol@example.com");
  const project = await bob.api.createProject({ body: { name: "bob's" } });
  const { device, credentials } = await bob.api.createDevice({
    params: { projectId: project.id },
    body: { name: "d", board: "pico_w" },
  });
  await bob.api.setEnvVar({ params: { projectId: project.id, name: "SECRET" }, body: { value: "bob only" } });
  const deployment = await bob.api.createDeployment({
    params: { projectId: project.id },
    body: {
      bundle: "export default 1",
      manifest: { board: "pico_w", entities: [], libraryVersion: "0.1.0" },
    },
  });
  const before = await snapshot(bob, project.id);
  const params = {
    projectId: project.id,
    deviceId: device.id,
    name: "SECRET",
    entityId: "temperature",
    deploymentId: deployment.id,
    tag: "all",
    ruleId: "alr_aaaaaaaaaaaaaaaaaaaa",
    webhookId: "whk_aaaaaaaaaaaaaaaaaaaa",
  };

  for (const [name, spec] of projectScoped) {
    if (spec.body) assert.ok(name in sampleBodies, `isolation test needs a sample body for ${name}`);
    await assert.rejects(
      carol.call(name, { params, body: sampleBodies[name] } as never),
      (error: unknown) => {
        assert.ok(error instanceof SdkApiError, `${name}: ${error}`);
        assert.equal(error.status, 404, `${name} must answer 404 to a stranger`);
        assert.equal(error.code, "not_found");
        return true;
      },
      name,
    );
  }
  assert.deepEqual(await carol.api.listProjects(), []);
  assert.deepEqual(await snapshot(bob, project.id), before, "nothing changed");
  assert.equal(credentials.deviceId, device.id);

  // admins see every project
  assert.deepEqual(
    (await alice.api.listProjects()).map((p) => p.id),
    [project.id],
  );
  assert.deepEqual(
    (await alice.api.listEnvVars({ params: { projectId: project.id } }))[0]?.value,
    "bob only",
  );
});

test("a user's own device id cannot be reached through another user's project id, nor the reverse", async (t) => {
  const { user } = await startTestServer(t);
  await user("admin@example.com");
  const { client: bob } = await user("bob@example.com");
  const { client: carol } = await user("carol@example.com");
  const bobs = await bob.api.createProject({ body: { name: "b" } });
  const carols = await carol.api.createProject({ body: { name: "c" } });
  const { device: bobDevice } = await bob.api.createDevice({
    params: { projectId: bobs.id },
    body: { name: "d", board: "pico_w" },
  });
  await assert.rejects(
    carol.api.getDevice({ params: { projectId: carols.id, deviceId: bobDevice.id } }),
    (e: unknown) => e instanceof SdkApiError && e.status === 404,
  );
  await assert.rejects(
    carol.api.rotateDeviceCredentials({ params: { projectId: carols.id, deviceId: bobDevice.id } }),
    (e: unknown) => e instanceof SdkApiError && e.status === 404,
  );
  assert.equal((await bob.api.listDevices({ params: { projectId: bobs.id } })).length, 1);
});
