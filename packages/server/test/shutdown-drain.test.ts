// A server that stops while a device's frames still wait handles them before closing the database:
// every frame the device got onto the socket before the close is stored after a restart.
import assert from "node:assert/strict";
import net from "node:net";
import { Writable } from "node:stream";
import { test } from "node:test";
import { SdkClient } from "@sdk/client";
import { pageLimits } from "@sdk/protocol";
import pino from "pino";
import { createTestServer, tempDir } from "./helpers/server.ts";
import { basic, hello, openSocket, wsUrl } from "./helpers/sockets.ts";

test("shutdown: frames read before the close are stored before the database closes", async (t) => {
  const dataDir = tempDir(t);
  const env = { STATE_HISTORY_MAX_ENTRIES: "100000" };
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
  // A slow uplink: frames the device sent before it saw the close reach the server after it closed
  // the device's socket.
  const proxy = slowUplink(new URL(url).port, 300);
  await new Promise<void>((listening) => proxy.server.listen(0, "127.0.0.1", listening));
  t.after(() => proxy.server.close());
  const proxyUrl = `http://127.0.0.1:${(proxy.server.address() as net.AddressInfo).port}`;
  const dev = await openSocket(t, wsUrl(proxyUrl, "/v1/device"), {
    headers: basic(device.id, credentials.secret),
  });
  dev.send(hello());
  await dev.inbox.type("welcome");

  // Sent before the close, still on their way when the server stops.
  proxy.hold();
  const count = 500;
  let accepted = 0;
  const sent: Promise<void>[] = [];
  for (let value = 0; value < count; value++) {
    sent.push(
      new Promise((done) =>
        dev.ws.send(JSON.stringify({ type: "state", entityId: "n", value }), (error) => {
          if (!error) accepted++;
          done();
        }),
      ),
    );
  }
  await Promise.all(sent);
  await server.close();
  await dev.closed;
  assert.equal(accepted, count, "the device got every frame onto its socket");

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

/**
 * A TCP proxy to `port` whose uplink can be held: while held, what the client sends waits in the
 * proxy; the first bytes from the server after that (its close frame) release it a little later,
 * as a slow uplink would deliver frames the device sent before it saw the close.
 */
function slowUplink(port: string, ms: number) {
  /** What the client sent while held, in order; null: its end. */
  let held: (Buffer | null)[] | null = null;
  const server = net.createServer((client) => {
    const up = net.connect(Number(port), "127.0.0.1");
    client.on("data", (chunk) => (held ? held.push(chunk) : up.write(chunk)));
    client.on("end", () => (held ? held.push(null) : up.end()));
    up.on("data", (chunk) => {
      client.write(chunk);
      if (held)
        setTimeout(() => {
          for (const part of held ?? []) part ? up.write(part) : up.end();
          held = null;
        }, ms);
    });
    up.on("end", () => client.end());
    for (const socket of [client, up])
      socket.on("error", () => {
        client.destroy();
        up.destroy();
      });
  });
  return {
    server,
    hold: () => {
      held = [];
    },
  };
}
