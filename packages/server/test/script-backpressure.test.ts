// A project whose scripts fall behind (a small CPU budget) pushes back on its devices: the device's
// frames stay in its socket (reading pauses) instead of piling up or being dropped, and every
// message still reaches the script and is stored.
import assert from "node:assert/strict";
import { test } from "node:test";
import { deployScript as deploy, waitUntil } from "@sdk/test-helpers";
import { scriptProject } from "./helpers/script-project.ts";
import { basic, hello, openSocket, wsUrl } from "./helpers/sockets.ts";

const slowScript = `
import { DeviceScript } from "@sdk/device";
export default class Slow extends DeviceScript {
  onMessage(message) {
    if (message.type === "spin") for (;;) {}
    if (message.type === "tick") this.env.DEVICE.emitState("v", message.seq);
  }
}
`;

const ticks = 2500;

test("a throttled project's back-pressure pauses reading its device's socket end to end, and nothing is lost", async (t) => {
  const s = await scriptProject(t, {
    env: {
      SCRIPT_CPU_BUDGET_MS: "10",
      SCRIPT_TIMEOUT_MS: "50",
      SCRIPT_WORKERS: "1",
      STATE_HISTORY_MAX_ENTRIES: String(ticks),
    },
  });
  await deploy(t, s.client, s.project.id, slowScript, { skipTypeCheck: true });
  const { device, credentials } = await s.client.api.createDevice({
    params: { projectId: s.project.id },
    body: { name: "fast", board: "pico_w" },
  });
  const ids = { projectId: s.project.id, deviceId: device.id };
  const watch = await openSocket(t, wsUrl(s.url, `/v1/projects/${s.project.id}/devices/${device.id}/watch`), {
    headers: { authorization: `Bearer ${s.client.token}` },
  });
  await watch.inbox.type("snapshot");
  const seen = new Set<number>();
  watch.ws.on("message", (data) => {
    const event = JSON.parse(data.toString()) as { type: string; value?: unknown };
    if (event.type === "state" && typeof event.value === "number") seen.add(event.value);
  });
  const socket = await openSocket(t, wsUrl(s.url, "/v1/device"), {
    headers: basic(credentials.deviceId, credentials.secret),
  });
  socket.send(hello());
  await socket.inbox.type("welcome");
  const scripts = s.server.services.scripts;
  await waitUntil(() => s.running() !== null, 30_000, "the script running");

  // Over its budget once: the project moves to the isolated worker, where it stays slow.
  await scripts.deliver(ids, { type: "spin" });
  await scripts.deliver(ids, { type: "spin" });
  await waitUntil(
    async () => (await s.logs(device.id)).some((l) => l.startsWith("scripts throttled:")),
    60_000,
    "the project throttled",
  );
  await scripts.settled(s.project.id);
  await waitUntil(() => s.running() !== null, 60_000, "the project running again");

  for (let seq = 1; seq <= ticks; seq++) socket.send({ type: "tick", seq });

  await waitUntil(() => seen.size === ticks, 300_000, "every tick stored and watched");
  assert.deepEqual(
    [...seen].sort((a, b) => a - b),
    Array.from({ length: ticks }, (_, i) => i + 1),
  );
  await waitUntil(
    async () => (await s.logs(device.id)).some((l) => /reading paused \d+ time/.test(l)),
    60_000,
    "the device log saying reading its socket paused",
  );
  const lines = await s.logs(device.id);
  assert.ok(!lines.some((l) => /dropped/.test(l) && !/none dropped/.test(l)), "nothing was dropped");
});
