import type { TestContext } from "node:test";
import { SimulatedDevice } from "@sdk/simulator";
import { startTestServer, type TestServerOptions, waitUntil } from "@sdk/test-helpers";

/** A simulated Pico W for a device's credentials (not started, no reconnecting), stopped when the test ends. */
export function simulatedBoard(
  t: TestContext,
  host: string,
  credentials: { deviceId: string; secret: string },
) {
  const sim = new SimulatedDevice({
    server: host,
    deviceId: credentials.deviceId,
    secret: credentials.secret,
    reconnect: false,
  });
  t.after(() => sim.stop());
  return sim;
}

/**
 * A server, a signed-in user (`auth` holds an API token) with one project, and simulated devices
 * for it (created stopped: `addDevice`; connected: `onlineDevice`; with the live script running:
 * `runningDevice`).
 */
export async function scriptProject(t: TestContext, options: TestServerOptions = {}) {
  const s = await startTestServer(t, options);
  const { client, auth } = await s.user();
  const project = await client.api.createProject({ body: { name: "p" } });
  const addDevice = async (name = "d", projectId = project.id) => {
    const { device, credentials } = await client.api.createDevice({
      params: { projectId },
      body: { name, board: "pico_w" },
    });
    const sim = simulatedBoard(t, new URL(s.url).host, credentials);
    return { device, credentials, sim, ids: { projectId, deviceId: device.id } };
  };
  const onlineDevice = async () => {
    const added = await addDevice();
    added.sim.start();
    await added.sim.waitFor("connected");
    return added;
  };
  const running = () => s.server.services.scripts.runningDeployment(project.id);
  /** A simulated board that is online with the live deployment's script running for it. */
  const runningDevice = async () => {
    const added = await onlineDevice();
    await waitUntil(() => running() !== null, 10_000, "the live deployment's scripts running");
    return added;
  };
  /** The device's log messages, oldest first. */
  const logs = async (deviceId: string, projectId = project.id) =>
    (await client.api.listDeviceLogs({ params: { projectId, deviceId }, query: { limit: 200 } }))
      .map((l) => l.message)
      .reverse();
  const live = async () =>
    (await client.api.listDeployments({ params: { projectId: project.id } })).find(
      (d) => d.status === "active",
    )?.id ?? null;
  return { ...s, client, auth, project, addDevice, onlineDevice, runningDevice, logs, live, running };
}
