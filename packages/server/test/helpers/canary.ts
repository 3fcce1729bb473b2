import type { TestContext } from "node:test";
import type { RolloutOptions } from "@sdk/protocol";
import { buildScript, deployScript, type TestServerOptions, waitUntil } from "@sdk/test-helpers";
import { scriptProject } from "./script-project.ts";

/** A script that logs `<name> up` on connect and `<name> got <type>` for each message. */
export const versionScript = (name: string) => `import { DeviceScript } from "@sdk/device";
export default class V extends DeviceScript {
  onDeviceConnect() { console.log("${name} up"); }
  onMessage(msg) { console.log("${name} got " + msg.type); }
}`;

/**
 * A project with a stable version `v1` live and two boards running it: `member` (tagged `canary`)
 * and `other`; `deployWith` uploads a script with rollout options.
 */
export async function canaryProject(t: TestContext, options: TestServerOptions = {}) {
  const s = await scriptProject(t, options);
  const projectId = s.project.id;
  const stable = await deployScript(t, s.client, projectId, versionScript("v1"));
  const member = await s.runningDevice();
  const other = await s.runningDevice();
  await s.client.api.addDeviceTags({ params: member.ids, body: { tags: ["canary"] } });
  for (const d of [member, other]) await waitUntil(async () => (await s.logs(d.device.id)).includes("v1 up"));
  const deployWith = async (script: string, rollout?: RolloutOptions) => {
    const built = await buildScript(t, script);
    return s.client.api.createDeployment({
      params: { projectId },
      body: { bundle: built.bundle, sourceMap: built.sourceMap, manifest: built.manifest, rollout },
    });
  };
  const deployment = (deploymentId: string) =>
    s.client.api.getDeployment({ params: { projectId, deploymentId } });
  /** Waits until the deployment has this status, and returns it. */
  const reaches = async (deploymentId: string, status: string) => {
    await waitUntil(async () => (await deployment(deploymentId)).status === status, 20_000, status);
    return deployment(deploymentId);
  };
  const send = (d: typeof member, type: string) =>
    s.client.api.sendDeviceMessage({ params: d.ids, body: { type } });
  const logged = (d: typeof member, line: string | RegExp) =>
    waitUntil(
      async () =>
        (await s.logs(d.device.id)).some((l) => (typeof line === "string" ? l === line : line.test(l))),
      20_000,
      `${d.device.name}'s log: ${line}`,
    );
  return { ...s, projectId, stable, member, other, deployWith, deployment, reaches, send, logged };
}
