// The project watch socket (/v1/projects/:projectId/watch): one stream for every device of a
// project, devices created after subscribing included, with filters, the per-device socket's
// authentication, seq numbers and slow-watcher rule.
import assert from "node:assert/strict";
import { test } from "node:test";
import { ProjectWatchEvent } from "@sdk/protocol";
import { raw, startTestServer } from "./helpers/server.ts";
import { basic, hello, type OpenSocket, openSocket, wsUrl } from "./helpers/sockets.ts";

type T = Parameters<typeof startTestServer>[0];

async function setup(t: T) {
  const s = await startTestServer(t);
  const alice = await s.user("alice@example.com");
  const bob = await s.user("bob@example.com");
  const project = await bob.client.api.createProject({ body: { name: "bob's" } });
  const first = await bob.client.api.createDevice({
    params: { projectId: project.id },
    body: { name: "first", board: "pico_w" },
  });
  const path = `/v1/projects/${project.id}/watch`;
  const watch = (t: T, query = "", token = bob.client.token) =>
    openSocket(t, wsUrl(s.url, `${path}${query}`), { headers: { authorization: `Bearer ${token}` } });
  const board = async (t: T, device: { id: string }, secret: string) => {
    const dev = await openSocket(t, wsUrl(s.url, "/v1/device"), { headers: basic(device.id, secret) });
    dev.send(hello("pico_w"));
    await dev.inbox.type("welcome");
    return dev;
  };
  return { ...s, alice, bob, project, first, path, watch, board };
}

function assertSequenced(socket: OpenSocket) {
  const seqs = socket.inbox.messages.map((m) => m.seq);
  assert.deepEqual(
    seqs,
    seqs.map((_, i) => i + 1),
    "seq counts up from 1 without gaps",
  );
  for (const m of socket.inbox.messages)
    assert.ok(ProjectWatchEvent.safeParse(m).success, `every event matches the schema: ${JSON.stringify(m)}`);
}

test("project watch: a device created after subscribing appears, with its events, and in the next snapshot", async (t) => {
  const s = await setup(t);
  const watch = await s.watch(t);
  const snapshot = await watch.inbox.type("snapshot");
  assert.equal(snapshot.seq, 1);
  assert.deepEqual(
    snapshot.devices.map((d: any) => [d.device.id, d.device.status, d.state]),
    [[s.first.device.id, "offline", []]],
  );

  const later = await s.bob.client.api.createDevice({
    params: { projectId: s.project.id },
    body: { name: "later", board: "pico2_w" },
  });
  const created = await watch.inbox.type("device_created");
  assert.deepEqual([created.deviceId, created.name, created.board], [later.device.id, "later", "pico2_w"]);

  const dev = await s.board(t, later.device, later.credentials.secret);
  const ofLater = (m: any) => m.deviceId === later.device.id;
  await watch.inbox.next((m) => ofLater(m) && m.type === "status" && m.status === "online");
  dev.send({ type: "log", level: "info", message: "hello from the new one" });
  dev.send({ type: "state", entityId: "temperature", value: 19.5 });
  await watch.inbox.next(
    (m) => ofLater(m) && m.type === "log" && m.entry.message === "hello from the new one",
  );
  const state = await watch.inbox.next((m) => ofLater(m) && m.type === "state");
  assert.deepEqual([state.entityId, state.value], ["temperature", 19.5]);

  // a second watcher's snapshot has both devices, the new one online with its state
  const second = await s.watch(t);
  const both = await second.inbox.type("snapshot");
  const byId = new Map(both.devices.map((d: any) => [d.device.id, d]));
  assert.equal(byId.size, 2);
  assert.equal((byId.get(later.device.id) as any).device.status, "online");
  assert.deepEqual(
    (byId.get(later.device.id) as any).state.map((v: any) => [v.entityId, v.value]),
    [["temperature", 19.5]],
  );

  await s.bob.client.api.renameDevice({
    params: { projectId: s.project.id, deviceId: later.device.id },
    body: { name: "renamed" },
  });
  const renamed = await watch.inbox.next((m) => ofLater(m) && m.type === "device_renamed");
  assert.equal(renamed.name, "renamed");

  dev.ws.close(1000);
  await watch.inbox.next((m) => ofLater(m) && m.type === "status" && m.status === "offline");
  await s.bob.client.api.deleteDevice({ params: { projectId: s.project.id, deviceId: later.device.id } });
  await watch.inbox.next((m) => ofLater(m) && m.type === "device_deleted");
  assert.equal(watch.ws.readyState, watch.ws.OPEN, "deleting one device does not end the project's stream");
  assertSequenced(watch);

  await s.bob.client.api.deleteProject({ params: { projectId: s.project.id } });
  const closed = await watch.closed;
  assert.deepEqual([closed.code, closed.reason], [4004, "project deleted"]);
});

test("project watch: another user's project is 404 before the upgrade, as for the per-device socket; access ends with the project", async (t) => {
  const s = await setup(t);
  const carol = await s.user("carol@example.com");
  const refused = async (path: string, token: string | undefined, status: number, code: string) =>
    assert.rejects(
      openSocket(t, wsUrl(s.url, path), { headers: token ? { authorization: `Bearer ${token}` } : {} }),
      (e: any) => {
        assert.equal(e.status, status);
        assert.equal(e.body.error.code, code);
        assert.ok(e.body.error.docs);
        return true;
      },
    );
  await refused(s.path, undefined, 401, "authentication_required");
  await refused(s.path, carol.client.token, 404, "not_found");
  await refused(`/v1/projects/prj_aaaaaaaaaaaaaaaaaaaa/watch`, s.bob.client.token, 404, "not_found");
  // the same refusal as the per-device socket
  await refused(
    `${s.path.replace(/watch$/, "")}devices/${s.first.device.id}/watch`,
    carol.client.token,
    404,
    "not_found",
  );
  const plain = await raw(`${s.url}${s.path}`, {
    headers: { authorization: `Bearer ${s.bob.client.token}` },
  });
  assert.equal(plain.status, 426, "a plain GET is not a watch");

  // carol's own project streams nothing of bob's
  const cp = await carol.client.api.createProject({ body: { name: "c" } });
  const carols = await openSocket(t, wsUrl(s.url, `/v1/projects/${cp.id}/watch`), {
    headers: { authorization: `Bearer ${carol.client.token}` },
  });
  assert.deepEqual((await carols.inbox.type("snapshot")).devices, []);
  const bobs = await s.watch(t);
  await bobs.inbox.type("snapshot");
  const added = await s.bob.client.api.createDevice({
    params: { projectId: s.project.id },
    body: { name: "x", board: "pico_w" },
  });
  await bobs.inbox.next((m) => m.type === "device_created" && m.deviceId === added.device.id);
  assert.deepEqual(
    carols.inbox.messages.map((m) => m.type),
    ["snapshot"],
  );
  // admins see every project
  const admin = await s.watch(t, "", s.alice.client.token);
  assert.equal((await admin.inbox.type("snapshot")).devices.length, 2);

  // deleting the owner deletes the project: the owner's stream ends as revoked, the admin's as gone
  await s.alice.client.api.deleteUser({ params: { userId: s.bob.auth.user.id } });
  assert.equal((await bobs.closed).code, 4001);
  assert.deepEqual(await admin.closed, { code: 4004, reason: "project deleted" });
  assert.equal(carols.ws.readyState, carols.ws.OPEN, "other projects' streams go on");
});

test("project watch: filters by device ids and event kinds, validated with the error envelope", async (t) => {
  const s = await setup(t);
  const second = await s.bob.client.api.createDevice({
    params: { projectId: s.project.id },
    body: { name: "second", board: "pico_w" },
  });
  const bad = async (query: string, field: string) =>
    assert.rejects(s.watch(t, query), (e: any) => {
      assert.equal(e.status, 400, query);
      assert.equal(e.body.error.code, "invalid_request");
      assert.ok(
        e.body.error.fields.some((f: any) => `${f.path} ${f.message}`.includes(field)),
        JSON.stringify(e.body.error.fields),
      );
      return true;
    });
  await bad("?events=status,temperature", "events");
  await bad("?devices=nope", "devices");
  await bad("?devices=", "devices");
  await bad(`?device=${s.first.device.id}`, "device");
  await assert.rejects(s.watch(t, "?devices=dev_aaaaaaaaaaaaaaaaaaaa"), (e: any) => {
    assert.equal(e.status, 404);
    assert.match(e.body.error.message, /dev_aaaaaaaaaaaaaaaaaaaa/);
    return true;
  });

  const onlySecond = await s.watch(t, `?devices=${second.device.id}`);
  const snapshot = await onlySecond.inbox.type("snapshot");
  assert.deepEqual(
    snapshot.devices.map((d: any) => d.device.id),
    [second.device.id],
  );
  const logsOnly = await s.watch(t, "?events=log");
  await logsOnly.inbox.type("snapshot");
  const all = await s.watch(t);
  await all.inbox.type("snapshot");

  const devFirst = await s.board(t, s.first.device, s.first.credentials.secret);
  const devSecond = await s.board(t, second.device, second.credentials.secret);
  devFirst.send({ type: "state", entityId: "a", value: 1 });
  devFirst.send({ type: "log", level: "info", message: "first says" });
  devSecond.send({ type: "state", entityId: "b", value: 2 });
  devSecond.send({ type: "log", level: "info", message: "second says" });
  const third = await s.bob.client.api.createDevice({
    params: { projectId: s.project.id },
    body: { name: "third", board: "pico_w" },
  });
  // the unfiltered watcher saw everything; the others have been sent what they asked for by then
  for (const m of ["first says", "second says"])
    await all.inbox.next((e) => e.type === "log" && e.entry.message === m);
  await all.inbox.next((e) => e.type === "state" && e.entityId === "b");
  await all.inbox.next((e) => e.type === "device_created" && e.deviceId === third.device.id);
  await logsOnly.inbox.next((e) => e.type === "device_created");
  await onlySecond.inbox.next((e) => e.type === "log" && e.entry.message === "second says");
  await onlySecond.inbox.next((e) => e.type === "state" && e.entityId === "b");
  // one more event that every watcher hears, so that nothing of the above can still be on its way
  devSecond.send({ type: "log", level: "info", message: "the end" });
  await onlySecond.inbox.next((e) => e.type === "log" && e.entry.message === "the end");
  await logsOnly.inbox.next((e) => e.type === "log" && e.entry.message === "the end");

  assert.ok(
    onlySecond.inbox.messages.every((m) => m.type === "snapshot" || m.deviceId === second.device.id),
    "only the device asked for, and no device_created",
  );
  assert.ok(
    logsOnly.inbox.messages.every((m) => ["snapshot", "log", "device_created"].includes(m.type)),
    JSON.stringify(logsOnly.inbox.messages.map((m) => m.type)),
  );
  assert.ok(logsOnly.inbox.messages.some((m) => m.type === "log" && m.entry.message === "first says"));
  assertSequenced(onlySecond);
  assertSequenced(logsOnly);
  assertSequenced(all);
});

test("project watch: a slow reader is bounded like the per-device socket: drops, a lagged notice, then delivery", async (t) => {
  const s = await setup(t);
  const slow = await s.watch(t, "?events=log");
  await slow.inbox.type("snapshot");
  const socket = (slow.ws as unknown as { _socket: import("node:net").Socket })._socket;
  socket.pause(); // stop reading: the kernel buffers fill, then the server's

  const dev = await s.board(t, s.first.device, s.first.credentials.secret);
  const line = "z".repeat(4000);
  const total = 2500;
  let maxBuffered = 0;
  const measure = () => {
    for (const c of s.server.app.websocketServer.clients)
      maxBuffered = Math.max(maxBuffered, c.bufferedAmount);
  };
  for (let i = 0; i < total; i++) {
    dev.send({ type: "log", level: "info", message: `${i} ${line}` });
    if (i % 100 === 99) {
      await new Promise((r) => setImmediate(r));
      measure();
    }
  }
  // the device's frames are handled in order: once the server echoes a ping-like log back to an
  // unthrottled watcher, every log before it has been offered to the slow one
  const witness = await s.watch(t, "?events=log");
  await witness.inbox.type("snapshot");
  dev.send({ type: "log", level: "info", message: "checkpoint" });
  await witness.inbox.next((m) => m.type === "log" && m.entry.message === "checkpoint", 60_000);
  measure();
  t.diagnostic(`largest server-side send buffer seen: ${maxBuffered} bytes`);
  assert.ok(maxBuffered < 256 * 1024 + 16 * 1024, `the server's buffer stays bounded: ${maxBuffered} bytes`);
  assert.equal(slow.ws.readyState, slow.ws.OPEN, "fewer than 10000 drops: the socket stays open");

  socket.resume();
  // Once the watcher has read its backlog, the next event it can be sent comes after a lagged notice.
  let final: any;
  for (let i = 0; i < 400 && !final; i++) {
    dev.send({ type: "log", level: "info", message: `final ${i}` });
    final = await slow.inbox
      .next((m) => m.type === "log" && m.entry.message.startsWith("final "), 100)
      .catch(() => undefined);
  }
  assert.ok(final, "delivery resumed");
  const upToFinal = slow.inbox.messages.filter((m) => m.seq <= final.seq);
  const lagged = upToFinal.filter((m) => m.type === "lagged");
  assert.ok(lagged.length > 0, "a lagged notice arrived");
  for (const notice of lagged) {
    const next = slow.inbox.messages.find((m) => m.seq === notice.seq + 1);
    assert.equal(next?.type, "log", "delivery goes on right after a notice");
  }
  const received = upToFinal.filter((m) => m.type === "log" && !m.entry.message.startsWith("final ")).length;
  const dropped = lagged.reduce((sum, m) => sum + m.dropped, 0);
  t.diagnostic(`received ${received} log events, dropped ${dropped}`);
  assert.ok(dropped > 0);
  assert.ok(received + dropped >= total + 1, "every event was either delivered or counted as dropped");
  assertSequenced(slow);
});
