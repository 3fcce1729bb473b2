// A device that sends faster than its frames are stored: its socket is paused (not read) while its
// queue is full and resumed when it drains; every frame that was read is stored, in order; a flooding
// device that closes goes offline without waiting for its backlog, which is still stored.
import assert from "node:assert/strict";
import { test } from "node:test";
import { pageLimits } from "@sdk/protocol";
import { deployScript, waitUntil } from "@sdk/test-helpers";
import { startTestServer } from "./helpers/server.ts";
import { basic, hello, openSocket, wsUrl } from "./helpers/sockets.ts";

type TestContext = Parameters<typeof startTestServer>[0];

/** Generous: the machine running the tests may be very busy; nothing here measures speed. */
const patienceMs = 240_000;

async function onlineDevice(t: TestContext, env: Record<string, string> = {}) {
  const server = await startTestServer(t, { env: { STATE_HISTORY_MAX_ENTRIES: "100000", ...env } });
  const { client } = await server.user();
  const project = await client.api.createProject({ body: { name: "p" } });
  const { device, credentials } = await client.api.createDevice({
    params: { projectId: project.id },
    body: { name: "d", board: "pico_w" },
  });
  const ids = { projectId: project.id, deviceId: device.id };
  const dev = await openSocket(t, wsUrl(server.url, "/v1/device"), {
    headers: basic(device.id, credentials.secret),
  });
  dev.send(hello());
  await dev.inbox.type("welcome");
  return { client, ids, dev, url: server.url, secret: credentials.secret };
}

type Client = Awaited<ReturnType<typeof onlineDevice>>["client"];

/** Every stored value of one entity, oldest first. */
async function history(client: Client, ids: { projectId: string; deviceId: string }, entityId: string) {
  const all: unknown[] = [];
  let before: string | undefined;
  for (;;) {
    const page = await client.api.getStateHistory({
      params: { ...ids, entityId },
      query: { limit: pageLimits.max, ...(before ? { before } : {}) },
    });
    all.push(...page.map((entry) => entry.value));
    if (page.length < pageLimits.max) break;
    before = page.at(-1)!.id;
  }
  return all.reverse();
}

/** Every device log line, oldest first. */
async function logs(client: Client, ids: { projectId: string; deviceId: string }) {
  const all: string[] = [];
  let before: string | undefined;
  for (;;) {
    const page = await client.api.listDeviceLogs({
      params: ids,
      query: { limit: pageLimits.max, ...(before ? { before } : {}) },
    });
    all.push(...page.map((entry) => entry.message));
    if (page.length < pageLimits.max) break;
    before = page.at(-1)!.id;
  }
  return all.reverse();
}

test("a device that sends faster than its frames are handled is paused, resumes, and loses nothing", async (t) => {
  const { client, ids, dev } = await onlineDevice(t, { DEVICE_LOG_MAX_ENTRIES: "100000" });
  // Answers to commands nobody sent: each is handled by writing a log line and waiting for its
  // commit, far slower than the socket delivers 8 KB frames, so the device's queue fills.
  const count = 600;
  const pad = "x".repeat(7_900);
  for (let id = 1; id <= count; id++) dev.send({ type: "result", id, value: { pad } });
  // Sent after the flood: it is read only if reading resumed after the pause.
  dev.send({ type: "state", entityId: "after", value: "read" });

  await waitUntil(
    async () => (await client.api.getDeviceState({ params: ids })).some((s) => s.entityId === "after"),
    patienceMs,
    "the frame sent after the flood is stored",
  );
  let paused: string | undefined;
  await waitUntil(
    async () => {
      const logs = await client.api.listDeviceLogs({ params: ids, query: { limit: pageLimits.max } });
      paused = logs.find((l) => /reading paused \d+ time/.test(l.message))?.message;
      return paused !== undefined;
    },
    patienceMs,
    "the device log says reading was paused",
  );
  t.diagnostic(paused!);
  assert.match(paused!, /\(none dropped\)$/);

  const answered = (await logs(client, ids))
    .map((l) => /^result for unknown command (\d+)$/.exec(l)?.[1])
    .filter((id) => id !== undefined)
    .map(Number);
  assert.deepEqual(
    answered,
    Array.from({ length: count }, (_, i) => i + 1),
    "every frame read was handled, in the order sent",
  );
  assert.equal((await client.api.getDevice({ params: ids })).status, "online");
});

test("a flooding device that closes goes offline without waiting for its backlog, which is still stored", async (t) => {
  const { client, ids, dev } = await onlineDevice(t);
  const count = 5_000;
  for (let i = 0; i < count; i++) dev.send({ type: "state", entityId: "n", value: i });
  dev.ws.close(1000, "done");
  await dev.closed;

  await waitUntil(
    async () => (await client.api.getDevice({ params: ids })).status === "offline",
    patienceMs,
    "the device is offline",
  );
  const storedWhenOffline = (await client.api.getDeviceState({ params: ids })).find(
    (s) => s.entityId === "n",
  );
  t.diagnostic(
    `latest value stored when the device showed offline: ${JSON.stringify(storedWhenOffline?.value)}`,
  );

  await waitUntil(
    async () =>
      (await client.api.getDeviceState({ params: ids })).find((s) => s.entityId === "n")?.value === count - 1,
    patienceMs,
    "the last frame sent before the close is stored",
  );
  const values = await history(client, ids, "n");
  assert.deepEqual(
    values,
    Array.from({ length: count }, (_, i) => i),
    "every frame sent before the close is stored, in order",
  );
  const logs = await client.api.listDeviceLogs({ params: ids });
  assert.ok(logs.some((l) => /^disconnected \(1000: done\)$/.test(l.message)));
});

test("after a flood and a reconnect, the new connection's value is stored last", async (t) => {
  const { client, ids, dev, url, secret } = await onlineDevice(t);
  const count = 5_000;
  for (let i = 0; i < count; i++) dev.send({ type: "state", entityId: "n", value: i });
  dev.ws.close(1000, "done");
  await dev.closed;

  const again = await openSocket(t, wsUrl(url, "/v1/device"), { headers: basic(ids.deviceId, secret) });
  again.send(hello());
  again.send({ type: "state", entityId: "n", value: "new" });
  await again.inbox.type("welcome");

  await waitUntil(
    async () => (await history(client, ids, "n")).includes("new"),
    patienceMs,
    "the new connection's value is stored",
  );
  const values = await history(client, ids, "n");
  assert.deepEqual(
    values,
    [...Array.from({ length: count }, (_, i) => i), "new"],
    "the old connection's backlog is stored first, then the new connection's frames",
  );
  const latest = (await client.api.getDeviceState({ params: ids })).find((s) => s.entityId === "n");
  assert.equal(latest?.value, "new");
});

test("a device that stops reading gets no more than a bounded backlog: sends fail, then it is closed", async (t) => {
  const { client, ids, dev, url, secret } = await onlineDevice(t, { DEVICE_LOG_MAX_ENTRIES: "100000" });
  await deployScript(
    t,
    client,
    ids.projectId,
    `import { DeviceScript } from "@sdk/device";
export default class Flood extends DeviceScript {
  onMessage(msg) {
    if (msg.type !== "flood") return;
    for (let i = 0; i < 50; i++) this.env.DEVICE.send({ type: "blob", data: "x".repeat(15000) });
  }
}`,
  );
  // The script instance starts on connect: connect again now that the script is live.
  dev.ws.close(1000, "reconnect");
  await dev.closed;
  const device = await openSocket(t, wsUrl(url, "/v1/device"), { headers: basic(ids.deviceId, secret) });
  device.send(hello());
  await device.inbox.type("welcome");
  device.ws.pause(); // the device stops reading its socket

  let refused: string | undefined;
  await waitUntil(
    async () => {
      device.send({ type: "flood" });
      refused = (await logs(client, ids)).find((l) => l.startsWith("send: the device has not read"));
      return refused !== undefined;
    },
    patienceMs,
    "a script's send is refused once the device is far enough behind",
  );
  t.diagnostic(refused!);
  assert.match(refused!, /\(limit 256 KB\)$/);

  await waitUntil(
    async () => (await client.api.getDevice({ params: ids })).status === "offline",
    patienceMs,
    "the device that stays behind is disconnected",
  );
  const closedLine = (await logs(client, ids)).find((l) => l.startsWith("disconnected (1008"));
  t.diagnostic(closedLine ?? "(no line)");
  assert.match(closedLine ?? "", /^disconnected \(1008: not reading: \d+ KB unsent for 10s\)$/);
});
