import assert from "node:assert/strict";
import { test } from "node:test";
import { SimulatedDevice } from "@sdk/simulator";
import { deployScript as deploy, startTestServer, waitUntil } from "@sdk/test-helpers";
import { scriptProject } from "./helpers/script-project.ts";

const alloc = "const a: number[][] = []; while (true) a.push(new Array(100000).fill(1));";
/** A version that logs when an instance starts and allocates until the memory cap on "alloc". */
const version = (name: string, onConnect = "") => `import { DeviceScript } from "@sdk/device";
export default class V extends DeviceScript {
  onDeviceConnect() { console.log("${name} up"); ${onConnect} }
  onMessage(msg) { if (msg.type === "alloc") { ${alloc} } else console.log("${name} got " + msg.type); }
}`;
const env = { SCRIPT_MEMORY_LIMIT_MB: "32", SCRIPT_TIMEOUT_MS: "200" };
const memoryCap = /memory limit exceeded/;

/** Lines logged after the first line that matches `from`. */
const after = (logs: string[], from: string) => logs.slice(logs.indexOf(from));

test("a version that hits the memory cap while going live fails; the live version goes on running", async (t) => {
  const s = await scriptProject(t, { env });
  const a = await deploy(t, s.client, s.project.id, version("A"));
  const { ids, device } = await s.onlineDevice();
  await waitUntil(async () => (await s.logs(device.id)).includes("A up"));
  await s.client.api.sendDeviceMessage({ params: ids, body: { type: "alloc" } });
  await waitUntil(async () => (await s.logs(device.id)).filter((l) => l === "A up").length === 2);

  const b = await deploy(t, s.client, s.project.id, version("B", alloc));
  assert.equal(b.status, "failed", "B crashed while going live");
  assert.match(b.error!, memoryCap);
  assert.equal(await s.live(), a.id);
  await waitUntil(() => s.running() !== null);
  assert.equal(s.running(), a.id, "the running version is the live one");
  await s.client.api.sendDeviceMessage({ params: ids, body: { type: "ping" } });
  await waitUntil(async () => (await s.logs(device.id)).includes("A got ping"));
});

test("after the live version crashes, the scripts restart with it, never with the version it replaced", async (t) => {
  const s = await scriptProject(t, { env });
  await deploy(t, s.client, s.project.id, version("A"));
  const { ids, device } = await s.onlineDevice();
  await waitUntil(async () => (await s.logs(device.id)).includes("A up"));
  await s.client.api.sendDeviceMessage({ params: ids, body: { type: "alloc" } });
  await waitUntil(async () => (await s.logs(device.id)).filter((l) => l === "A up").length === 2);

  const b = await deploy(t, s.client, s.project.id, version("B"));
  assert.equal(b.status, "active");
  await waitUntil(async () => (await s.logs(device.id)).includes("B up"));
  await s.client.api.sendDeviceMessage({ params: ids, body: { type: "alloc" } });
  await waitUntil(async () => (await s.logs(device.id)).filter((l) => l === "B up").length === 2);
  assert.equal(s.running(), b.id);
  await s.client.api.sendDeviceMessage({ params: ids, body: { type: "ping" } });
  await waitUntil(async () => (await s.logs(device.id)).includes("B got ping"));
  const since = after(await s.logs(device.id), "B up");
  assert.ok(!since.includes("A up"), `A never ran again:\n${since.join("\n")}`);
});

test("a redeploy while the scripts restart after crashes: only the new version runs", async (t) => {
  const s = await scriptProject(t, { env });
  // A crashes from a timer right after every start, so its restarts overlap the next deploy.
  await deploy(t, s.client, s.project.id, version("A", `setTimeout(() => { ${alloc} }, 10);`));
  const { ids, device } = await s.onlineDevice();
  await waitUntil(async () => (await s.logs(device.id)).includes("A up"));
  const b = await deploy(t, s.client, s.project.id, version("B"));
  assert.equal(b.status, "active");
  await waitUntil(() => s.running() === b.id);
  await s.client.api.sendDeviceMessage({ params: ids, body: { type: "ping" } });
  await waitUntil(async () => (await s.logs(device.id)).includes("B got ping"));
  const since = after(await s.logs(device.id), "B up");
  assert.ok(!since.includes("A up"), `A never ran again:\n${since.join("\n")}`);
  assert.equal(since.filter((l) => l === "B up").length, 1, since.join("\n"));
  assert.equal(s.running(), b.id);
});

test("after a server restart the live version runs", async (t) => {
  const first = await scriptProject(t, { env });
  await deploy(t, first.client, first.project.id, version("A"));
  const b = await deploy(t, first.client, first.project.id, version("B"));
  await first.server.close();
  const again = await startTestServer(t, { env, dataDir: first.dataDir });
  const client = again.client(first.client.token);
  const { device: d, credentials } = await client.api.createDevice({
    params: { projectId: first.project.id },
    body: { name: "d", board: "pico_w" },
  });
  const sim = new SimulatedDevice({
    server: new URL(again.url).host,
    deviceId: d.id,
    secret: credentials.secret,
    reconnect: false,
  });
  t.after(() => sim.stop());
  sim.start();
  await sim.waitFor("connected");
  await waitUntil(() => again.server.services.scripts.runningDeployment(first.project.id) === b.id);
  const logs = async () =>
    (await client.api.listDeviceLogs({ params: { projectId: first.project.id, deviceId: d.id } })).map(
      (l) => l.message,
    );
  await waitUntil(async () => (await logs()).includes("B up"));
  assert.ok(!(await logs()).includes("A up"));
});
