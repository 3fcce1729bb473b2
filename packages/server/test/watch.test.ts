import assert from "node:assert/strict";
import { test } from "node:test";
import { WatchEvent } from "@sdk/protocol";
import { waitUntil } from "@sdk/test-helpers";
import { raw, startTestServer } from "./helpers/server.ts";
import { basic, hello, openSocket, wsUrl } from "./helpers/sockets.ts";

type T = Parameters<typeof startTestServer>[0];

async function setup(t: T) {
  const s = await startTestServer(t);
  const alice = await s.user("alice@example.com");
  const bob = await s.user("bob@example.com");
  const project = await bob.client.api.createProject({ body: { name: "bob's" } });
  const { device, credentials } = await bob.client.api.createDevice({
    params: { projectId: project.id },
    body: { name: "d", board: "pico2_w" },
  });
  const path = `/v1/projects/${project.id}/devices/${device.id}/watch`;
  return {
    ...s,
    alice,
    bob,
    project,
    device,
    credentials,
    path,
    ids: { projectId: project.id, deviceId: device.id },
  };
}

const bearer = (token: string | undefined) => ({ authorization: `Bearer ${token}` });

test("watch: 401 without credentials, 404 for a device the caller cannot see, before the upgrade", async (t) => {
  const s = await setup(t);
  const refused = async (headers: Record<string, string>, status: number, code: string, path = s.path) =>
    assert.rejects(openSocket(t, wsUrl(s.url, path), { headers }), (e: any) => {
      assert.equal(e.status, status);
      assert.equal(e.body.error.code, code);
      assert.ok(e.body.error.docs);
      return true;
    });
  await refused({}, 401, "authentication_required");
  await refused(bearer("sdk_nope"), 401, "invalid_token");
  // carol is neither owner nor admin (alice, the first account, is the admin)
  const carol = await s.user("carol@example.com");
  await refused(bearer(carol.client.token), 404, "not_found");
  await refused(
    bearer(s.bob.client.token),
    404,
    "not_found",
    `/v1/projects/${s.project.id}/devices/dev_aaaaaaaaaaaaaaaaaaaa/watch`,
  );
  const carols = await carol.client.api.createProject({ body: { name: "c" } });
  await refused(
    bearer(carol.client.token),
    404,
    "not_found",
    `/v1/projects/${carols.id}/devices/${s.device.id}/watch`,
  );
  const plain = await raw(`${s.url}${s.path}`, { headers: bearer(s.bob.client.token) });
  assert.equal(plain.status, 426, "a plain GET is not a watch");
  assert.equal(plain.body.error.code, "upgrade_required");
  // admins see every device
  const admin = await openSocket(t, wsUrl(s.url, s.path), { headers: bearer(s.alice.client.token) });
  assert.equal((await admin.inbox.type("snapshot")).device.id, s.device.id);
});

test("watch: snapshot, then status, log and state events with increasing seq", async (t) => {
  const s = await setup(t);
  const dev0 = await openSocket(t, wsUrl(s.url, "/v1/device"), {
    headers: basic(s.device.id, s.credentials.secret),
  });
  dev0.send(hello("pico2_w"));
  await dev0.inbox.type("welcome");
  dev0.send({ type: "state", entityId: "temperature", value: 20 });
  dev0.ws.close(1000);
  await dev0.closed;
  // The server handles a device's frames and its close in order, on its own schedule: once it says
  // offline, the state before the close is stored.
  await waitUntil(
    async () => (await s.bob.client.api.getDevice({ params: s.ids })).status === "offline",
    15_000,
    "the device to be offline",
  );

  const watch = await openSocket(t, wsUrl(s.url, s.path), { headers: bearer(s.bob.client.token) });
  const snapshot = await watch.inbox.type("snapshot");
  assert.equal(snapshot.seq, 1);
  assert.equal(snapshot.device.status, "offline");
  assert.deepEqual(
    snapshot.state.map((v: any) => [v.entityId, v.value]),
    [["temperature", 20]],
  );

  const dev = await openSocket(t, wsUrl(s.url, "/v1/device"), {
    headers: basic(s.device.id, s.credentials.secret),
  });
  dev.send(hello("pico2_w"));
  await watch.inbox.next((m) => m.type === "status" && m.status === "online");
  dev.send({ type: "log", level: "warn", message: "battery low" });
  dev.send({ type: "state", entityId: "temperature", value: 21.25 });
  const log = await watch.inbox.next((m) => m.type === "log" && m.entry.message === "battery low");
  assert.equal(log.entry.level, "warn");
  assert.equal(log.entry.source, "device");
  const state = await watch.inbox.next((m) => m.type === "state");
  assert.equal(state.entityId, "temperature");
  assert.equal(state.value, 21.25);
  dev.ws.close(1000);
  const offline = await watch.inbox.next((m) => m.type === "status" && m.status === "offline");
  assert.ok(offline.reason);

  const seqs = watch.inbox.messages.map((m) => m.seq);
  assert.deepEqual(
    seqs,
    seqs.map((_, i) => i + 1),
    "seq counts up from 1 without gaps",
  );
  for (const m of watch.inbox.messages) {
    assert.ok(WatchEvent.safeParse(m).success, `every event matches the schema: ${JSON.stringify(m)}`);
    assert.ok(!Number.isNaN(Date.parse(m.at)));
  }
});

test("watch: browsers authenticate with the session cookie (same origin only) or a bearer sub-protocol", async (t) => {
  const s = await setup(t);
  const login = await raw(`${s.url}/v1/auth/login`, {
    method: "POST",
    json: { email: "bob@example.com", password: "correct horse battery" },
  });
  const cookie = login.headers.getSetCookie()[0]!.split(";")[0]!;
  const viaCookie = await openSocket(t, wsUrl(s.url, s.path), { headers: { cookie, origin: s.url } });
  await viaCookie.inbox.type("snapshot");
  await assert.rejects(
    openSocket(t, wsUrl(s.url, s.path), { headers: { cookie, origin: "https://evil.example" } }),
    (e: any) => e.status === 403 && e.body.error.code === "cross_site_request",
  );
  const viaProtocol = await openSocket(t, wsUrl(s.url, s.path), {
    protocols: ["sdk.v1", `bearer.${s.bob.client.token}`],
  });
  assert.equal(viaProtocol.ws.protocol, "sdk.v1", "the token is never echoed back as the chosen protocol");
  await viaProtocol.inbox.type("snapshot");
  const reversed = await openSocket(t, wsUrl(s.url, s.path), {
    protocols: [`bearer.${s.bob.client.token}`, "sdk.v1"],
  });
  assert.equal(reversed.ws.protocol, "sdk.v1", "whatever the order offered");
  await reversed.inbox.type("snapshot");
  await assert.rejects(
    openSocket(t, wsUrl(s.url, s.path), { protocols: ["sdk.v1", "bearer.sdk_wrong"] }),
    (e: any) => e.status === 401,
  );
});

test("watch: one user's watcher never sees another user's device events", async (t) => {
  const s = await setup(t);
  const carol = await s.user("carol@example.com");
  const cp = await carol.client.api.createProject({ body: { name: "c" } });
  const cd = await carol.client.api.createDevice({
    params: { projectId: cp.id },
    body: { name: "c", board: "pico_w" },
  });
  const carolWatch = await openSocket(
    t,
    wsUrl(s.url, `/v1/projects/${cp.id}/devices/${cd.device.id}/watch`),
    {
      headers: bearer(carol.client.token),
    },
  );
  await carolWatch.inbox.type("snapshot");
  const bobWatch = await openSocket(t, wsUrl(s.url, s.path), { headers: bearer(s.bob.client.token) });
  await bobWatch.inbox.type("snapshot");

  const dev = await openSocket(t, wsUrl(s.url, "/v1/device"), {
    headers: basic(s.device.id, s.credentials.secret),
  });
  dev.send(hello("pico2_w"));
  dev.send({ type: "log", level: "info", message: "bob's secret log" });
  await bobWatch.inbox.next((m) => m.type === "log" && m.entry.message === "bob's secret log");
  assert.deepEqual(
    carolWatch.inbox.messages.map((m) => m.type),
    ["snapshot"],
  );
});

test("watch: a slow watcher is bounded: events are dropped past the buffer and a lagged notice follows", async (t) => {
  const s = await setup(t);
  const slow = await openSocket(t, wsUrl(s.url, s.path), { headers: bearer(s.bob.client.token) });
  await slow.inbox.type("snapshot");
  const socket = (slow.ws as unknown as { _socket: import("node:net").Socket })._socket;
  socket.pause(); // stop reading: the kernel buffers fill, then the server's

  const dev = await openSocket(t, wsUrl(s.url, "/v1/device"), {
    headers: basic(s.device.id, s.credentials.secret),
  });
  dev.send(hello("pico2_w"));
  await dev.inbox.type("welcome");
  const line = "z".repeat(4000);
  let maxBuffered = 0;
  const serverSide = () =>
    [...s.server.app.websocketServer.clients].filter((c) => c.protocol === "" && c !== undefined);
  for (let i = 0; i < 2500; i++) {
    dev.send({ type: "log", level: "info", message: `${i} ${line}` });
    if (i % 100 === 99) {
      await new Promise((r) => setTimeout(r, 5));
      for (const c of serverSide()) maxBuffered = Math.max(maxBuffered, c.bufferedAmount);
    }
  }
  dev.send({ type: "log", level: "info", message: "the last one" });
  await new Promise((r) => setTimeout(r, 200));
  for (const c of serverSide()) maxBuffered = Math.max(maxBuffered, c.bufferedAmount);
  t.diagnostic(`largest server-side send buffer seen: ${maxBuffered} bytes`);
  assert.ok(maxBuffered < 256 * 1024 + 16 * 1024, `bounded: ${maxBuffered}`);

  socket.resume();
  // Once the watcher has read its backlog, the next event brings the lagged notice first. How long
  // the backlog takes to drain depends on the machine, so keep producing events until it comes.
  let lagged: any;
  for (let i = 0; i < 200 && !lagged; i++) {
    dev.send({ type: "log", level: "info", message: `after resume ${i}` });
    lagged = await slow.inbox.next((m) => m.type === "lagged", 100).catch(() => undefined);
  }
  assert.ok(lagged, "a lagged notice arrived");
  assert.ok(lagged.dropped > 0);
  const after = await slow.inbox.next((m) => m.seq === lagged.seq + 1, 10_000);
  assert.equal(after.type, "log", "delivery goes on right after the notice");
  // On a busy machine the server may still be working through the device's backlog when the
  // watcher resumes, so the buffer can fill again: count the drops of every notice, up to an
  // event that arrived after all of them.
  let final: any;
  for (let i = 0; i < 200 && !final; i++) {
    dev.send({ type: "log", level: "info", message: `final ${i}` });
    final = await slow.inbox
      .next((m) => m.type === "log" && m.entry.message.startsWith("final "), 100)
      .catch(() => undefined);
  }
  assert.ok(final, "a last event arrived");
  const upToFinal = slow.inbox.messages.filter((m) => m.seq <= final.seq);
  const received = upToFinal.filter((m) => m.type === "log").length;
  const dropped = upToFinal.filter((m) => m.type === "lagged").reduce((sum, m) => sum + m.dropped, 0);
  t.diagnostic(`received ${received} log events, dropped ${dropped}`);
  assert.ok(received + dropped >= 2500, "every event was either delivered or counted as dropped");
});

test("watch: a revoked token, a deleted user or a lost admin role ends the stream (4001)", async (t) => {
  const s = await setup(t);
  const token = await s.bob.client.api.createToken({ body: { name: "ha" } });
  const viaToken = await openSocket(t, wsUrl(s.url, s.path), { headers: bearer(token.token) });
  await viaToken.inbox.type("snapshot");
  const viaOther = await openSocket(t, wsUrl(s.url, s.path), { headers: bearer(s.bob.client.token) });
  await viaOther.inbox.type("snapshot");
  await s.bob.client.api.revokeToken({ params: { tokenId: token.id } });
  const closed = await viaToken.closed;
  assert.equal(closed.code, 4001);
  assert.equal(viaOther.ws.readyState, viaOther.ws.OPEN, "other credentials keep their stream");

  // an admin watching someone else's device loses the stream when demoted
  const carol = await s.user("carol@example.com");
  await s.alice.client.api.changeRole({ params: { userId: carol.auth.user.id }, body: { role: "admin" } });
  const asAdmin = await openSocket(t, wsUrl(s.url, s.path), { headers: bearer(carol.client.token) });
  await asAdmin.inbox.type("snapshot");
  await s.alice.client.api.changeRole({ params: { userId: carol.auth.user.id }, body: { role: "member" } });
  assert.equal((await asAdmin.closed).code, 4001);
  await assert.rejects(
    openSocket(t, wsUrl(s.url, s.path), { headers: bearer(carol.client.token) }),
    (e: any) => e.status === 404,
  );

  // deleting the owner ends their streams
  await s.alice.client.api.deleteUser({ params: { userId: s.bob.auth.user.id } });
  assert.ok([4001, 4004].includes((await viaOther.closed).code));
});
