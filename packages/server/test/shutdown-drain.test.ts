// A server that stops while a device's frames still wait handles them before closing the database:
// every frame the device got onto the socket before the close is stored after a restart.
import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { test } from "node:test";
import { SdkClient } from "@sdk/client";
import { pageLimits } from "@sdk/protocol";
import pino from "pino";
import { createTestServer, tempDir } from "./helpers/server.ts";
import { basic, hello, openSocket, wsUrl } from "./helpers/sockets.ts";

test("shutdown: frames read before the close are stored before the database closes", async (t) => {
  const dataDir = tempDir(t);
  const env = { STATE_HISTORY_MAX_ENTRIES: "100000", WRITE_QUEUE_MAX_ROWS: "10" };
  const lines: { level: number; msg: string }[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(String(chunk)));
      done();
    },
  });
  const server = await createTestServer(t, { dataDir, env, logger: pino({ level: "warn" }, sink) });
  const url = await server.listen();
  const anon = new SdkClient({ baseUrl: url });
  const { token } = await anon.api.register({
    body: { email: "a@example.com", password: "correct horse battery", issueToken: true },
  });
  const client = new SdkClient({ baseUrl: url, token: token!.token });
  const project = await client.api.createProject({ body: { name: "p" } });
  const { device, credentials } = await client.api.createDevice({
    params: { projectId: project.id },
    body: { name: "d", board: "pico_w" },
  });
  const dev = await openSocket(t, wsUrl(url, "/v1/device"), {
    headers: basic(device.id, credentials.secret),
  });
  dev.send(hello());
  await dev.inbox.type("welcome");

  // The device floods until it sees the close: frames keep arriving while the server stops.
  let accepted = 0;
  let sent = 0;
  let open = true;
  const sending: Promise<void>[] = [];
  const flooding = (async () => {
    while (open) {
      for (let i = 0; i < 20; i++) {
        const value = sent++;
        sending.push(
          new Promise((done) =>
            dev.ws.send(JSON.stringify({ type: "state", entityId: "n", value }), (error) => {
              if (!error) accepted++;
              done();
            }),
          ),
        );
      }
      await new Promise((next) => setImmediate(next));
    }
  })();
  void dev.closed.then(() => {
    open = false;
  });
  while (sent < 500) await new Promise((next) => setImmediate(next));
  await server.close();
  await dev.closed;
  await flooding;
  await Promise.all(sending);
  assert.ok(accepted > 0, "the device got frames onto the socket");

  const failures = lines.filter((l) => l.level >= 50);
  assert.deepEqual(failures, [], "nothing failed while stopping");

  const again = await createTestServer(t, { dataDir, env });
  const url2 = await again.listen();
  const client2 = new SdkClient({ baseUrl: url2, token: token!.token });
  let stored = 0;
  let before: string | undefined;
  for (;;) {
    const page = await client2.api.getStateHistory({
      params: { projectId: project.id, deviceId: device.id, entityId: "n" },
      query: { limit: pageLimits.max, ...(before ? { before } : {}) },
    });
    stored += page.length;
    if (page.length < pageLimits.max) break;
    before = page.at(-1)!.id;
  }
  assert.equal(stored, accepted, "every frame the device sent before the close is handled");
});
