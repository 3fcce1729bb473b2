// Many device messages through a script (onMessage → emitState) with a small write queue: every
// message ends up stored and seen by the device's watcher, none lost, and the queue of rows waiting
// for their commit never grows past its bound.
import assert from "node:assert/strict";
import { type TestContext, test } from "node:test";
import { deployScript as deploy, waitUntil } from "@sdk/test-helpers";
import { postgresUrl } from "./helpers/postgres.ts";
import { scriptProject } from "./helpers/script-project.ts";
import { basic, hello, openSocket, wsUrl } from "./helpers/sockets.ts";

const tickScript = `
import { DeviceScript } from "@sdk/device";
export default class Ticks extends DeviceScript {
  onMessage(message) {
    if (message.type === "tick") this.env.DEVICE.emitState("v", message.seq);
  }
}
`;

const devices = 4;
const perDevice = 1500;
const queueBound = 50;

async function flood(t: TestContext, env: Record<string, string>): Promise<void> {
  const s = await scriptProject(t, {
    env: { ...env, WRITE_QUEUE_MAX_ROWS: String(queueBound), STATE_HISTORY_MAX_ENTRIES: String(perDevice) },
  });
  await deploy(t, s.client, s.project.id, tickScript);
  const batcher = s.server.database.batcher;
  let mostQueued = 0;
  const sample = setInterval(() => {
    mostQueued = Math.max(mostQueued, batcher.queued);
  }, 1);
  t.after(() => clearInterval(sample));

  const fleet = await Promise.all(
    Array.from({ length: devices }, async (_, i) => {
      const { device, credentials } = await s.client.api.createDevice({
        params: { projectId: s.project.id },
        body: { name: `d${i}`, board: "pico_w" },
      });
      const watch = await openSocket(
        t,
        wsUrl(s.url, `/v1/projects/${s.project.id}/devices/${device.id}/watch`),
        { headers: { authorization: `Bearer ${s.client.token}` } },
      );
      await watch.inbox.type("snapshot");
      const seen = new Set<number>();
      let lagged = 0;
      watch.ws.on("message", (data) => {
        const event = JSON.parse(data.toString()) as { type: string; value?: unknown; dropped?: number };
        mostQueued = Math.max(mostQueued, batcher.queued);
        if (event.type === "state" && typeof event.value === "number") seen.add(event.value);
        if (event.type === "lagged") lagged += event.dropped ?? 0;
      });
      const socket = await openSocket(t, wsUrl(s.url, "/v1/device"), {
        headers: basic(credentials.deviceId, credentials.secret),
      });
      socket.send(hello());
      await socket.inbox.type("welcome");
      return { deviceId: device.id, socket, seen, lagged: () => lagged };
    }),
  );
  await waitUntil(() => s.running() !== null, 10_000, "the script running");

  // Device k sends seqs k*perDevice+1 … (k+1)*perDevice, all at once.
  fleet.forEach((d, k) => {
    for (let i = 1; i <= perDevice; i++) d.socket.send({ type: "tick", seq: k * perDevice + i });
  });

  await waitUntil(
    () => fleet.every((d) => d.seen.size === perDevice || d.lagged() > 0),
    120_000,
    "every watcher seeing every value",
  );
  for (const d of fleet) assert.equal(d.lagged(), 0, "no watcher was told it lagged");
  for (const [k, d] of fleet.entries()) {
    const expected = Array.from({ length: perDevice }, (_, i) => k * perDevice + i + 1);
    assert.deepEqual(
      [...d.seen].sort((a, b) => a - b),
      expected,
      `device ${k}: every value seen once`,
    );
    const history: number[] = [];
    let before: string | undefined;
    for (;;) {
      const page = await s.client.api.getStateHistory({
        params: { projectId: s.project.id, deviceId: d.deviceId, entityId: "v" },
        query: { limit: 500, ...(before ? { before } : {}) },
      });
      history.push(...page.map((h) => h.value as number));
      if (page.length < 500) break;
      before = page.at(-1)!.id;
    }
    assert.deepEqual(
      history.sort((a, b) => a - b),
      expected,
      `device ${k}: every value stored`,
    );
    const latest = await s.client.api.getDeviceState({
      params: { projectId: s.project.id, deviceId: d.deviceId },
    });
    assert.deepEqual(
      latest.map((v) => [v.entityId, v.value]),
      [["v", expected.at(-1)]],
      `device ${k}: the latest value is its last message's`,
    );
  }
  t.diagnostic(`most rows queued for a commit: ${mostQueued} (bound ${queueBound})`);
  assert.ok(mostQueued <= queueBound + devices, `the write queue stayed near its bound (${mostQueued})`);
}

test("under a flood of device messages nothing acknowledged is lost and the write queue stays bounded (SQLite)", (t) =>
  flood(t, {}));

test("the same on PostgreSQL", async (t) => {
  const url = await postgresUrl(t);
  if (url) await flood(t, { DATABASE_URL: url });
});
