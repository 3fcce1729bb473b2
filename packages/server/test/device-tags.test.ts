// Device tags: the tag rule, tags in device bodies, the list filter, commands and messages to every
// device with a tag (answers per device, an overall timeout), bulk provisioning, the project watch's
// tag filter, and another user's 404 for all of it.
import assert from "node:assert/strict";
import { test } from "node:test";
import { ProjectWatchEvent } from "@sdk/protocol";
import { deployScript, waitUntil } from "@sdk/test-helpers";
import { scriptProject, simulatedBoard } from "./helpers/script-project.ts";
import { raw } from "./helpers/server.ts";
import { basic, hello, openSocket, wsUrl } from "./helpers/sockets.ts";

type T = Parameters<typeof scriptProject>[0];

async function setup(t: T) {
  const s = await scriptProject(t, { env: { DEVICE_COMMAND_TIMEOUT_SECONDS: "120" } });
  const token = s.auth.token!.token;
  const http = (method: string, path: string, json?: unknown, as = token) =>
    raw(`${s.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${as}` },
      ...(json === undefined ? {} : { json }),
    });
  const devicesPath = `/v1/projects/${s.project.id}/devices`;
  const tag = (deviceId: string, tags: string[]) =>
    s.client.api.setDeviceTags({ params: { projectId: s.project.id, deviceId }, body: { tags } });
  return { ...s, http, devicesPath, tag };
}

test("tags: set, add and remove; shown in device bodies; the list filters by tag", async (t) => {
  const s = await setup(t);
  const a = await s.addDevice("a");
  const b = await s.addDevice("b");
  const params = { projectId: s.project.id, deviceId: a.device.id };
  assert.deepEqual(a.device.tags, [], "a new device has no tags");

  const set = await s.client.api.setDeviceTags({ params, body: { tags: ["kitchen", "floor-2", "kitchen"] } });
  assert.deepEqual(set.tags, ["floor-2", "kitchen"], "sorted, duplicates collapse");
  const added = await s.client.api.addDeviceTags({ params, body: { tags: ["batch_2026", "kitchen"] } });
  assert.deepEqual(added.tags, ["batch_2026", "floor-2", "kitchen"]);
  const removed = await s.client.api.removeDeviceTag({ params: { ...params, tag: "floor-2" } });
  assert.deepEqual(removed.tags, ["batch_2026", "kitchen"]);
  const again = await s.client.api.removeDeviceTag({ params: { ...params, tag: "floor-2" } });
  assert.deepEqual(again.tags, ["batch_2026", "kitchen"], "removing a tag it lacks is no error");
  assert.deepEqual((await s.client.api.getDevice({ params })).tags, ["batch_2026", "kitchen"]);
  await s.tag(b.device.id, ["kitchen"]);

  const all = await s.client.api.listDevices({ params: { projectId: s.project.id } });
  assert.deepEqual(
    all.map((d) => [d.name, d.tags]),
    [
      ["a", ["batch_2026", "kitchen"]],
      ["b", ["kitchen"]],
    ],
  );
  const byTag = async (tag: string) =>
    (await s.client.api.listDevices({ params: { projectId: s.project.id }, query: { tag } })).map(
      (d) => d.name,
    );
  assert.deepEqual(await byTag("kitchen"), ["a", "b"]);
  assert.deepEqual(await byTag("batch_2026"), ["a"]);
  assert.deepEqual(await byTag("garage"), []);

  // the project's audit-free change is visible to watchers and the list; clearing removes all
  assert.deepEqual((await s.tag(a.device.id, [])).tags, []);
  assert.deepEqual(await byTag("batch_2026"), []);
});

test("tags: invalid tags are refused with the error envelope and nothing changes", async (t) => {
  const s = await setup(t);
  const a = await s.addDevice("a");
  await s.tag(a.device.id, ["kitchen"]);
  const path = `${s.devicesPath}/${a.device.id}/tags`;
  for (const [body, field] of [
    [{ tags: ["Kitchen"] }, "tags.0"],
    [{ tags: ["-lead"] }, "tags.0"],
    [{ tags: ["ok", "has space"] }, "tags.1"],
    [{ tags: ["x".repeat(33)] }, "tags.0"],
    [{ tags: Array.from({ length: 17 }, (_, i) => `t${i}`) }, "tags"],
    [{ tags: "kitchen" }, "tags"],
  ] as const) {
    const res = await s.http("PUT", path, body);
    assert.equal(res.status, 400, JSON.stringify(body));
    assert.equal(res.body.success, false);
    assert.equal(res.body.error.code, "invalid_request");
    assert.ok(
      res.body.error.fields.some((f: any) => f.path === field),
      `${JSON.stringify(res.body.error.fields)} names ${field}`,
    );
    assert.match(res.body.error.docs, /^http/);
  }
  // adding past the per-device limit
  await s.tag(
    a.device.id,
    Array.from({ length: 16 }, (_, i) => `t${i}`),
  );
  const over = await s.http("POST", path, { tags: ["one-more"] });
  assert.equal(over.status, 400);
  assert.equal(over.body.error.code, "invalid_request");
  assert.match(over.body.error.message, /at most 16 tags/);
  // named like the schema's own complaint about 17 tags in one request: fields relative to the body
  assert.deepEqual(over.body.error.fields, [{ path: "tags", message: "a device has at most 16 tags" }]);
  assert.match(over.body.error.message, /^Invalid request: tags a device has at most 16 tags/);
  const seventeen = await s.http("PUT", path, { tags: Array.from({ length: 17 }, (_, i) => `t${i}`) });
  assert.deepEqual(seventeen.body.error.fields, over.body.error.fields);
  assert.equal(
    (await s.client.api.getDevice({ params: { projectId: s.project.id, deviceId: a.device.id } })).tags
      .length,
    16,
  );

  const badFilter = await s.http("GET", `${s.devicesPath}?tag=NOPE`);
  assert.equal(badFilter.status, 400);
  assert.equal(badFilter.body.error.code, "invalid_request");
  const badRemove = await s.http("DELETE", `${path}/Bad%20Tag`);
  assert.equal(badRemove.status, 200, "removing a tag no device can have is a no-op");
});

test("a command to a tag: every tagged device answers or is reported offline; others get nothing", async (t) => {
  const s = await setup(t);
  const one = await s.onlineDevice();
  const two = await s.onlineDevice();
  const offline = await s.addDevice("sleeping");
  const untagged = await s.onlineDevice();
  for (const d of [one, two, offline]) await s.tag(d.device.id, ["lights"]);

  const outcome = await s.client.api.sendTagCommand({
    params: { projectId: s.project.id },
    body: { tag: "lights", type: "gpio_write", args: { pin: 2, value: 1 } },
  });
  assert.equal(outcome.tag, "lights");
  const byId = new Map(outcome.devices.map((d) => [d.deviceId, d]));
  assert.equal(byId.size, 3);
  for (const d of [one, two]) {
    const answer = byId.get(d.device.id)!;
    assert.equal(answer.ok, true, JSON.stringify(answer));
    assert.equal(d.sim.commandsOf("gpio_write").length, 1);
  }
  const off = byId.get(offline.device.id)!;
  assert.equal(off.ok, false);
  assert.equal(off.ok === false && off.error.code, "device_offline");
  assert.equal(off.name, "sleeping");
  assert.equal(untagged.sim.commandsOf("gpio_write").length, 0, "a device without the tag got nothing");

  // arguments wrong for the board: refused before any device gets the command
  const bad = await s.http("POST", `/v1/projects/${s.project.id}/commands`, {
    tag: "lights",
    type: "gpio_write",
    args: { pin: 99, value: 1 },
  });
  assert.equal(bad.status, 400);
  assert.equal(bad.body.error.code, "invalid_argument");
  assert.equal(one.sim.commandsOf("gpio_write").length, 1);

  // a tag no device has: an empty answer
  const none = await s.client.api.sendTagCommand({
    params: { projectId: s.project.id },
    body: { tag: "nobody", type: "gpio_write", args: { pin: 2, value: 0 } },
  });
  assert.deepEqual(none.devices, []);
});

test("a command to a tag: a device that never answers is reported as device_timeout after the overall timeout", async (t) => {
  const s = await setup(t);
  const quick = await s.onlineDevice();
  const { device, credentials } = await s.client.api.createDevice({
    params: { projectId: s.project.id },
    body: { name: "silent", board: "pico_w" },
  });
  const silent = await openSocket(t, wsUrl(s.url, "/v1/device"), {
    headers: basic(device.id, credentials.secret),
  });
  silent.send(hello("pico_w"));
  await silent.inbox.type("welcome");
  await s.tag(quick.device.id, ["fleet"]);
  await s.tag(device.id, ["fleet"]);

  const outcome = await s.client.api.sendTagCommand({
    params: { projectId: s.project.id },
    body: { tag: "fleet", type: "gpio_write", args: { pin: 3, value: 1 }, timeoutSeconds: 1 },
  });
  const byId = new Map(outcome.devices.map((d) => [d.deviceId, d]));
  const late = byId.get(device.id)!;
  assert.equal(late.ok, false);
  assert.equal(late.ok === false && late.error.code, "device_timeout");
  assert.match(late.ok === false ? late.error.message : "", /overall 1s/);
  await silent.inbox.type("gpio_write");
  // the device that answered in time (on a busy machine it may not have: then it timed out too)
  const fast = byId.get(quick.device.id)!;
  assert.ok(fast.ok || fast.error.code === "device_timeout", JSON.stringify(fast));

  const tooLong = await s.http("POST", `/v1/projects/${s.project.id}/commands`, {
    tag: "fleet",
    type: "gpio_write",
    args: { pin: 3, value: 1 },
    timeoutSeconds: 121,
  });
  assert.equal(tooLong.status, 400);
  assert.equal(tooLong.body.error.fields[0].path, "timeoutSeconds");
});

test("a message to a tag reaches each tagged device's script; offline devices are reported", async (t) => {
  const s = await setup(t);
  await deployScript(
    t,
    s.client,
    s.project.id,
    `import { DeviceScript } from "@sdk/device";
export default class S extends DeviceScript {
  onDeviceConnect() { console.log("script up"); }
  onMessage(msg: { type: string; level?: number }) { console.log("got " + msg.type + " " + msg.level); }
}`,
  );
  const one = await s.runningDevice();
  const two = await s.runningDevice();
  const offline = await s.addDevice("away");
  const other = await s.runningDevice();
  for (const d of [one, two, offline]) await s.tag(d.device.id, ["hall"]);
  for (const d of [one, two, other])
    await waitUntil(
      async () => (await s.logs(d.device.id)).includes("script up"),
      15_000,
      "the script running",
    );

  const outcome = await s.client.api.sendTagMessage({
    params: { projectId: s.project.id },
    body: { tag: "hall", message: { type: "dim", level: 3 } },
  });
  const byId = new Map(outcome.devices.map((d) => [d.deviceId, d]));
  assert.equal(byId.get(one.device.id)!.ok, true);
  assert.equal(byId.get(two.device.id)!.ok, true);
  const off = byId.get(offline.device.id)!;
  assert.equal(off.ok === false && off.error.code, "device_offline");
  assert.equal(byId.has(other.device.id), false);
  for (const d of [one, two])
    await waitUntil(
      async () => (await s.logs(d.device.id)).includes("got dim 3"),
      15_000,
      "the script got it",
    );
  assert.equal((await s.logs(other.device.id)).includes("got dim 3"), false);

  const bad = await s.http("POST", `/v1/projects/${s.project.id}/messages`, {
    tag: "hall",
    message: { type: "Not Snake" },
  });
  assert.equal(bad.status, 400);
  assert.equal(bad.body.error.fields[0].path, "message.type");
});

test("bulk creation: all or nothing with every bad row named; credentials work for connecting", async (t) => {
  const s = await setup(t);
  const bulk = `${s.devicesPath}/bulk`;
  const bad = await s.http("POST", bulk, {
    devices: [
      { name: "ok-1", board: "pico_w" },
      { name: "", board: "pico_w" },
      { name: "ok-3", board: "esp32" },
      { name: "ok-4", board: "pico2_w", tags: ["Shelf"] },
    ],
  });
  assert.equal(bad.status, 400);
  assert.equal(bad.body.error.code, "invalid_request");
  const paths = bad.body.error.fields.map((f: any) => f.path);
  for (const p of ["devices.1.name", "devices.2.board", "devices.3.tags.0"])
    assert.ok(paths.includes(p), `${p} in ${paths}`);
  assert.deepEqual(await s.client.api.listDevices({ params: { projectId: s.project.id } }), [], "none added");

  const tooMany = await s.http("POST", bulk, {
    devices: Array.from({ length: 501 }, (_, i) => ({ name: `d${i}`, board: "pico_w" })),
  });
  assert.equal(tooMany.status, 400);
  assert.match(tooMany.body.error.message, /at most 500/);

  const made = await s.client.api.createDevices({
    params: { projectId: s.project.id },
    body: {
      devices: [
        { name: "shelf-1", board: "pico_w", tags: ["shelf", "batch-7"] },
        { name: "shelf-2", board: "pico2_w", tags: ["shelf"] },
        { name: "spare", board: "pico_w" },
      ],
    },
  });
  assert.deepEqual(
    made.devices.map((d) => [
      d.device.name,
      d.device.board,
      d.device.tags,
      d.credentials.deviceId === d.device.id,
    ]),
    [
      ["shelf-1", "pico_w", ["batch-7", "shelf"], true],
      ["shelf-2", "pico2_w", ["shelf"], true],
      ["spare", "pico_w", [], true],
    ],
  );
  const listed = await s.client.api.listDevices({
    params: { projectId: s.project.id },
    query: { tag: "shelf" },
  });
  assert.deepEqual(listed.map((d) => d.name).sort(), ["shelf-1", "shelf-2"]);

  const sim = simulatedBoard(t, new URL(s.url).host, made.devices[0]!.credentials);
  sim.start();
  await sim.waitFor("connected");
  await waitUntil(
    async () =>
      (
        await s.client.api.getDevice({
          params: { projectId: s.project.id, deviceId: made.devices[0]!.device.id },
        })
      ).status === "online",
  );
});

test("another user gets 404 for every tag endpoint, and their tags never show", async (t) => {
  const s = await setup(t);
  const a = await s.addDevice("a");
  await s.tag(a.device.id, ["mine"]);
  const mallory = await s.user();
  const other = mallory.auth.token!.token;
  const project = s.project.id;
  const device = `${s.devicesPath}/${a.device.id}`;
  for (const [method, path, body] of [
    ["GET", `/v1/projects/${project}/devices?tag=mine`, undefined],
    ["PUT", `${device}/tags`, { tags: ["x"] }],
    ["POST", `${device}/tags`, { tags: ["x"] }],
    ["DELETE", `${device}/tags/mine`, undefined],
    [
      "POST",
      `/v1/projects/${project}/commands`,
      { tag: "mine", type: "gpio_write", args: { pin: 2, value: 1 } },
    ],
    ["POST", `/v1/projects/${project}/messages`, { tag: "mine", message: { type: "hi" } }],
    ["POST", `/v1/projects/${project}/devices/bulk`, { devices: [{ name: "x", board: "pico_w" }] }],
  ] as const) {
    const res = await s.http(method, path, body, other);
    assert.equal(res.status, 404, `${method} ${path}`);
    assert.equal(res.body.error.code, "not_found");
  }
  assert.deepEqual(
    (await s.client.api.getDevice({ params: { projectId: project, deviceId: a.device.id } })).tags,
    ["mine"],
  );
  assert.equal((await s.client.api.listDevices({ params: { projectId: project } })).length, 1);
});

test("project watch ?tags=: only tagged devices; a device that gains the tag joins, one that loses it leaves", async (t) => {
  const s = await setup(t);
  const tagged = await s.onlineDevice();
  const later = await s.onlineDevice();
  await s.tag(tagged.device.id, ["kitchen"]);
  const path = `/v1/projects/${s.project.id}/watch`;
  const open = (query: string) =>
    openSocket(t, wsUrl(s.url, `${path}${query}`), {
      headers: { authorization: `Bearer ${s.auth.token!.token}` },
    });
  const watch = await open("?tags=kitchen,hall");
  const all = await open("");
  const snapshot = await watch.inbox.type("snapshot");
  assert.deepEqual(
    snapshot.devices.map((d: any) => [d.device.id, d.device.tags]),
    [[tagged.device.id, ["kitchen"]]],
  );
  await all.inbox.type("snapshot");

  const logOf = (socket: typeof watch, deviceId: string, message: string) =>
    socket.inbox.next((m) => m.type === "log" && m.deviceId === deviceId && m.entry.message === message);

  // `later` has no tag: its log reaches the unfiltered watcher only
  later.sim.sendLog("info", "untagged 1");
  await logOf(all, later.device.id, "untagged 1");
  // it gains a tag: it joins with a device_tags event, and its events follow
  await s.tag(later.device.id, ["hall"]);
  const joined = await watch.inbox.next((m) => m.type === "device_tags" && m.deviceId === later.device.id);
  assert.deepEqual(joined.tags, ["hall"]);
  later.sim.sendLog("info", "tagged");
  await logOf(watch, later.device.id, "tagged");
  // it loses the tag: a last device_tags event, then nothing more of it
  await s.tag(later.device.id, ["garage"]);
  const left = await watch.inbox.next(
    (m) => m.type === "device_tags" && m.deviceId === later.device.id && m.tags.includes("garage"),
  );
  assert.deepEqual(left.tags, ["garage"]);
  later.sim.sendLog("info", "untagged 2");
  await logOf(all, later.device.id, "untagged 2");
  // a marker from the tagged device arrives after anything the watcher could have got from `later`
  tagged.sim.sendLog("info", "marker");
  await logOf(watch, tagged.device.id, "marker");

  // bulk-created devices with a matching tag appear as device_created with their tags
  const made = await s.client.api.createDevices({
    params: { projectId: s.project.id },
    body: {
      devices: [
        { name: "new-hall", board: "pico_w", tags: ["hall"] },
        { name: "plain", board: "pico_w" },
      ],
    },
  });
  const created = await watch.inbox.type("device_created");
  assert.deepEqual([created.deviceId, created.tags], [made.devices[0]!.device.id, ["hall"]]);
  await all.inbox.next((m) => m.type === "device_created" && m.deviceId === made.devices[1]!.device.id);
  tagged.sim.sendLog("info", "marker 2");
  await logOf(watch, tagged.device.id, "marker 2");

  const fromLater = watch.inbox.messages.filter((m) => m.deviceId === later.device.id && m.type === "log");
  assert.deepEqual(
    fromLater.map((m) => m.entry.message),
    ["tagged"],
  );
  assert.equal(
    watch.inbox.messages.some((m) => m.deviceId === made.devices[1]!.device.id),
    false,
    "an untagged new device is not in the filtered stream",
  );
  for (const m of watch.inbox.messages)
    assert.ok(ProjectWatchEvent.safeParse(m).success, `matches the schema: ${JSON.stringify(m)}`);
  assert.deepEqual(
    watch.inbox.messages.map((m) => m.seq),
    watch.inbox.messages.map((_, i) => i + 1),
  );

  const bad = await raw(`${s.url}${path}?tags=Bad`, {
    headers: { authorization: `Bearer ${s.auth.token!.token}` },
  });
  assert.equal(bad.status, 400);
});
