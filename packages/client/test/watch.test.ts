// The watch client against a real server: the snapshot on open, the token as a sub-protocol,
// reconnecting after a drop, and not reconnecting after 4001 (revoked), 4004 (gone) or stop().
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { SdkClient, type WatchHandle, type WatchOptions, watchDevice } from "@sdk/client";
import type { WatchEvent } from "@sdk/protocol";
import { type ServerProcess, startServer } from "./helpers/server.ts";

interface Close {
  code: number;
  reason: string;
  willReconnect: boolean;
}

/** What one watch saw, and a way to wait (bounded) until it has seen something. */
function watcher(
  url: string,
  token: string | undefined,
  ids: { projectId: string; deviceId: string },
  options: Partial<WatchOptions> = {},
) {
  const seen = { opens: 0, events: [] as WatchEvent[], closes: [] as Close[] };
  const waiters = new Set<() => void>();
  const changed = () => {
    for (const w of waiters) w();
  };
  const handle: WatchHandle = watchDevice(url, token, ids, {
    ...options,
    onOpen() {
      seen.opens++;
      changed();
    },
    onEvent(event) {
      seen.events.push(event);
      changed();
    },
    onClose(info) {
      seen.closes.push(info);
      changed();
    },
  });
  const until = (what: string, done: () => boolean, ms = 20_000) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (!done()) return;
        waiters.delete(check);
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(new Error(`watch: ${what} did not happen within ${ms} ms (${JSON.stringify(seen.closes)})`));
      }, ms);
      waiters.add(check);
      check();
    });
  const snapshots = () => seen.events.filter((e) => e.type === "snapshot").length;
  return { seen, handle, until, snapshots };
}

/** No second connection is opened within the time the first retry would have taken (≤ 500 ms). */
async function staysClosed(w: ReturnType<typeof watcher>, opens: number) {
  await sleep(1_500);
  assert.equal(w.seen.opens, opens, "no reconnect");
}

let server: ServerProcess;
let admin: SdkClient;

async function device(client = admin) {
  const project = await client.api.createProject({ body: { name: `p${Math.random()}` } });
  const created = await client.api.createDevice({
    params: { projectId: project.id },
    body: { name: "board", board: "pico_w" },
  });
  return { projectId: project.id, deviceId: created.device.id };
}

before(async () => {
  server = await startServer();
  const auth = await new SdkClient({ baseUrl: server.url }).api.register({
    body: { email: "admin@example.com", password: "correct horse battery", issueToken: true },
  });
  admin = new SdkClient({ baseUrl: server.url, token: auth.token!.token });
});
after(() => server.dispose());

test("a watch opens with the token as its sub-protocol and starts with a snapshot; stop() ends it", async (t) => {
  const ids = await device();
  const w = watcher(server.url, admin.token, ids);
  t.after(() => w.handle.stop());
  await w.until("the snapshot", () => w.snapshots() === 1);
  assert.equal(w.seen.opens, 1);
  const snapshot = w.seen.events[0]!;
  assert.equal(snapshot.type, "snapshot");

  w.handle.stop();
  await w.until("the close", () => w.seen.closes.length === 1);
  assert.deepEqual(
    { code: w.seen.closes[0]!.code, willReconnect: w.seen.closes[0]!.willReconnect },
    { code: 1000, willReconnect: false },
  );
  await staysClosed(w, 1);
});

/** The server closed the watch with `code`, and the client stays closed. */
async function closedForGood(w: ReturnType<typeof watcher>, code: number) {
  await w.until("the close", () => w.seen.closes.length === 1);
  assert.equal(w.seen.closes[0]!.code, code);
  assert.equal(w.seen.closes[0]!.willReconnect, false);
  await staysClosed(w, 1);
}

test("a revoked token closes the watch with 4001 and the client does not reconnect", async (t) => {
  const ids = await device();
  const created = await admin.api.createToken({ body: { name: "watcher" } });
  const w = watcher(server.url, created.token, ids);
  t.after(() => w.handle.stop());
  await w.until("the snapshot", () => w.snapshots() === 1);

  await admin.api.revokeToken({ params: { tokenId: created.id } });
  await closedForGood(w, 4001);
});

test("a deleted device closes the watch with 4004 and the client does not reconnect", async (t) => {
  const ids = await device();
  const w = watcher(server.url, admin.token, ids);
  t.after(() => w.handle.stop());
  await w.until("the snapshot", () => w.snapshots() === 1);

  await admin.api.deleteDevice({ params: ids });
  await closedForGood(w, 4004);
});

test("after the server restarts, the watch reconnects by itself and gets a fresh snapshot", async (t) => {
  const own = await startServer();
  t.after(() => own.dispose());
  const auth = await new SdkClient({ baseUrl: own.url }).api.register({
    body: { email: "owner@example.com", password: "correct horse battery", issueToken: true },
  });
  const client = new SdkClient({ baseUrl: own.url, token: auth.token!.token });
  const ids = await device(client);
  const w = watcher(own.url, client.token, ids);
  t.after(() => w.handle.stop());
  await w.until("the snapshot", () => w.snapshots() === 1);

  await own.stop();
  await w.until("the close", () => w.seen.closes.length >= 1);
  // 1001 when the server's close frame arrives first, 1006 when the connection just ends.
  assert.ok([1001, 1006].includes(w.seen.closes[0]!.code), `closed with ${w.seen.closes[0]!.code}`);
  assert.equal(w.seen.closes[0]!.willReconnect, true);

  await own.start();
  await w.until("a second snapshot", () => w.snapshots() === 2);
  assert.ok(w.seen.opens >= 2);
  assert.ok(w.seen.closes.every((c) => c.willReconnect));
});

test("with reconnect: false, a dropped watch stays closed", async (t) => {
  const own = await startServer();
  t.after(() => own.dispose());
  const auth = await new SdkClient({ baseUrl: own.url }).api.register({
    body: { email: "owner@example.com", password: "correct horse battery", issueToken: true },
  });
  const client = new SdkClient({ baseUrl: own.url, token: auth.token!.token });
  const ids = await device(client);
  const w = watcher(own.url, client.token, ids, { reconnect: false });
  t.after(() => w.handle.stop());
  await w.until("the snapshot", () => w.snapshots() === 1);

  await own.stop();
  await own.start();
  await w.until("the close", () => w.seen.closes.length === 1);
  assert.equal(w.seen.closes[0]!.willReconnect, false);
  await staysClosed(w, 1);
});
