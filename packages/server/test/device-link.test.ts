import assert from "node:assert/strict";
import net from "node:net";
import { test } from "node:test";
import { deviceCloseCodes } from "@sdk/protocol";
import { waitUntil, within } from "@sdk/test-helpers";
import { startTestServer } from "./helpers/server.ts";
import { basic, hello, type OpenSocket, openSocket, wsUrl } from "./helpers/sockets.ts";

async function setup(t: Parameters<typeof startTestServer>[0], env: Record<string, string> = {}) {
  const server = await startTestServer(t, { env });
  const { client, auth } = await server.user();
  const project = await client.api.createProject({ body: { name: "p" } });
  const { device, credentials } = await client.api.createDevice({
    params: { projectId: project.id },
    body: { name: "d", board: "pico_w" },
  });
  const ids = { projectId: project.id, deviceId: device.id };
  return { ...server, client, auth, project, device, credentials, ids };
}

async function connect(
  t: Parameters<typeof startTestServer>[0],
  server: { url: string },
  deviceId: string,
  secret: string,
) {
  return openSocket(t, wsUrl(server.url, "/v1/device"), { headers: basic(deviceId, secret) });
}

async function online(
  t: Parameters<typeof startTestServer>[0],
  s: Awaited<ReturnType<typeof setup>>,
): Promise<OpenSocket> {
  const dev = await connect(t, s, s.device.id, s.credentials.secret);
  dev.send(hello());
  await dev.inbox.type("welcome");
  return dev;
}

test("wrong, unknown or missing credentials: 401 before the upgrade with 'Invalid device credentials'", async (t) => {
  const s = await setup(t);
  const attempts: Record<string, string>[] = [
    basic(s.device.id, "dsk_wrong"),
    basic("dev_aaaaaaaaaaaaaaaaaaaa", s.credentials.secret),
    {},
    { authorization: "Bearer nothing" },
    { authorization: "Basic !!!" },
  ];
  for (const headers of attempts) {
    await assert.rejects(openSocket(t, wsUrl(s.url, "/v1/device"), { headers }), (error: any) => {
      assert.equal(error.status, 401);
      assert.equal(error.body.success, false);
      assert.equal(error.body.error.code, "invalid_device_credentials");
      assert.equal(error.body.error.message, "Invalid device credentials");
      assert.match(error.body.error.docs, /\/docs\/errors#invalid_device_credentials$/);
      return true;
    });
  }
});

test("hello → welcome, online in REST, connected entry in the logs", async (t) => {
  const s = await setup(t, { HEARTBEAT_SECONDS: "7" });
  const dev = await connect(t, s, s.device.id, s.credentials.secret);
  dev.send(hello());
  const welcome = await dev.inbox.type("welcome");
  assert.equal(welcome.protocol, 1);
  assert.equal(welcome.deviceId, s.device.id);
  assert.equal(welcome.heartbeatSeconds, 7);
  assert.ok(!Number.isNaN(Date.parse(welcome.serverTime)));
  const device = await s.client.api.getDevice({ params: s.ids });
  assert.equal(device.status, "online");
  assert.equal(device.firmwareVersion, "test-1.0");
  assert.ok(device.lastSeenAt);
  const logs = await s.client.api.listDeviceLogs({ params: s.ids });
  assert.equal(logs[0]?.source, "system");
  assert.match(logs[0]!.message, /^connected \(firmware test-1\.0, pico_w\)$/);

  dev.ws.close(1000);
  await dev.closed;
  await waitUntil(async () => (await s.client.api.getDevice({ params: s.ids })).status === "offline");
  const after = await s.client.api.listDeviceLogs({ params: s.ids });
  assert.match(after[0]!.message, /^disconnected \(1000/);
});

test("garbage gets error replies and log entries; a device that keeps at it is disconnected", async (t) => {
  const s = await setup(t);
  const dev = await connect(t, s, s.device.id, s.credentials.secret);
  dev.send({ type: "log", level: "info", message: "before hello" });
  assert.equal((await dev.inbox.next((m) => m.code === "not_ready")).type, "error");
  dev.send(hello());
  await dev.inbox.type("welcome");

  const cases: [unknown, string][] = [
    ["not json", "malformed"],
    [[1, 2], "malformed"],
    [{ no: "type" }, "malformed"],
    [{ type: "Not A Type!" }, "unknown_type"],
    [{ type: "gpio_write", id: 3, pin: 1, value: 1 }, "unknown_type"],
    [{ type: "welcome" }, "unknown_type"],
    [{ type: "log", level: "loud", message: "x" }, "invalid_message"],
    [{ type: "gpio_change", pin: 99, value: 1 }, "invalid_message"],
  ];
  for (const [frame, code] of cases) {
    const before = dev.inbox.messages.length;
    dev.send(frame);
    const reply = await dev.inbox.next((m) => dev.inbox.messages.indexOf(m) >= before && m.type === "error");
    assert.equal(reply.code, code, JSON.stringify(frame));
    assert.ok(reply.message.length > 0);
  }
  const replyWithId = dev.inbox.messages.find((m) => m.type === "error" && m.id === 3);
  assert.ok(replyWithId, "an error reply echoes the frame's id");
  dev.ws.send(Buffer.from([1, 2, 3]), { binary: true });
  await dev.inbox.next((m) => m.type === "error" && /binary/.test(m.message));
  const logs = await s.client.api.listDeviceLogs({ params: s.ids, query: { limit: 50 } });
  assert.ok(logs.filter((l) => l.message.startsWith("protocol error")).length >= cases.length);

  // ids are echoed only when they are real command ids
  const beforeOdd = dev.inbox.messages.length;
  dev.send({ type: "result", id: 1.5 });
  const odd = await dev.inbox.next((m) => dev.inbox.messages.indexOf(m) >= beforeOdd && m.type === "error");
  assert.equal(odd.id, undefined);

  // the device is still fine, and custom events are accepted (even ones named like Object's properties)
  const routed: string[] = [];
  t.after(s.server.bus.subscribe("device.message", ({ message }) => void routed.push(message.type)));
  dev.send({ type: "constructor" });
  dev.send({ type: "button_pressed", count: 1 });
  dev.send({ type: "log", level: "info", message: "still here" });
  await waitUntil(
    async () => (await s.client.api.listDeviceLogs({ params: s.ids }))[0]?.message === "still here",
  );

  for (let i = 0; i < 20; i++) dev.send("garbage");
  const closed = await dev.closed;
  assert.equal(closed.code, deviceCloseCodes.misbehaving);
});

test("a frame of 64 KB or more is refused with close 1009 and logged on the device", async (t) => {
  const s = await setup(t);
  const dev = await online(t, s);
  dev.send({ type: "log", level: "info", message: "x".repeat(65_000) }); // under 64 KB: accepted as a frame, but too long for a log line
  const ok = await dev.inbox.type("error");
  assert.equal(ok.code, "invalid_message");
  dev.ws.send("y".repeat(64 * 1024));
  const closed = await dev.closed;
  assert.equal(closed.code, 1009);
  await waitUntil(async () =>
    (await s.client.api.listDeviceLogs({ params: s.ids })).some((l) =>
      /64 KB or more was refused/.test(l.message),
    ),
  );
});

test("a second connection with the same credentials replaces the first", async (t) => {
  const s = await setup(t);
  const first = await online(t, s);
  const second = await online(t, s);
  const closed = await first.closed;
  assert.equal(closed.code, deviceCloseCodes.replaced);
  assert.match(closed.reason, /replaced/);
  assert.equal(
    (await s.client.api.getDevice({ params: s.ids })).status,
    "online",
    "still online through the new one",
  );
  second.send({ type: "log", level: "info", message: "from the second" });
  await waitUntil(
    async () => (await s.client.api.listDeviceLogs({ params: s.ids }))[0]?.message === "from the second",
  );
});

test("rotating the secret closes the live connection; the old secret no longer connects", async (t) => {
  const s = await setup(t);
  const dev = await online(t, s);
  const rotated = await s.client.api.rotateDeviceCredentials({ params: s.ids });
  const closed = await dev.closed;
  assert.equal(closed.code, deviceCloseCodes.revoked);
  await assert.rejects(connect(t, s, s.device.id, s.credentials.secret), (e: any) => e.status === 401);
  const fresh = await connect(t, s, s.device.id, rotated.secret);
  fresh.send(hello());
  await fresh.inbox.type("welcome");
});

test("deleting the device closes its connection and its watchers", async (t) => {
  const s = await setup(t);
  const dev = await online(t, s);
  const watch = await openSocket(
    t,
    wsUrl(s.url, `/v1/projects/${s.project.id}/devices/${s.device.id}/watch`),
    {
      headers: { authorization: `Bearer ${s.client.token}` },
    },
  );
  await watch.inbox.type("snapshot");
  await s.client.api.deleteDevice({ params: s.ids });
  assert.equal((await dev.closed).code, deviceCloseCodes.revoked);
  assert.equal((await watch.closed).code, 4004);
});

test("a device that vanishes without a close frame goes offline after two missed heartbeats", async (t) => {
  const s = await setup(t, { HEARTBEAT_SECONDS: "1" });
  // A raw TCP client doing the upgrade by hand, so the test can stop answering pings.
  const socket = net.connect(Number(new URL(s.url).port), "127.0.0.1");
  t.after(() => socket.destroy());
  await new Promise((r) => socket.once("connect", r));
  socket.write(
    [
      "GET /v1/device HTTP/1.1",
      `Host: 127.0.0.1`,
      "Upgrade: websocket",
      "Connection: Upgrade",
      "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
      "Sec-WebSocket-Version: 13",
      `Authorization: ${basic(s.device.id, s.credentials.secret).authorization}`,
      "",
      "",
    ].join("\r\n"),
  );
  await new Promise((r) => socket.once("data", r));
  let received = "";
  const welcomed = new Promise<void>((resolve) =>
    socket.on("data", (chunk) => {
      received += chunk.toString("latin1");
      if (received.includes('"welcome"')) resolve();
    }),
  );
  const frame = Buffer.from(JSON.stringify(hello()));
  const mask = Buffer.from([1, 2, 3, 4]);
  const masked = Buffer.from(frame.map((b, i) => b ^ mask[i % 4]!));
  // The hello is the device's last sign of life: it never answers a ping (it cannot).
  const lastSignOfLife = performance.now();
  socket.write(
    Buffer.concat([Buffer.from([0x81, 0x80 | 126, frame.length >> 8, frame.length & 255]), mask, masked]),
  );
  await within(welcomed, 15_000, "the welcome");
  socket.pause();
  // The heartbeat runs on real timers; the bound below only guards against a hang.
  await waitUntil(
    async () => (await s.client.api.getDevice({ params: s.ids })).status === "offline",
    30_000,
    "offline after missed heartbeats",
  );
  const elapsed = performance.now() - lastSignOfLife;
  t.diagnostic(`offline ${Math.round(elapsed)}ms after the device's last frame (heartbeat 1s)`);
  // Two missed pongs: never before two intervals (less a few ms of timer rounding).
  assert.ok(elapsed >= 1_950, `not offline before two heartbeat intervals, took ${elapsed}ms`);
  const logs = await s.client.api.listDeviceLogs({ params: s.ids });
  assert.match(logs[0]!.message, /heartbeat timeout/);
});

test("commands round-trip: result, device error, timeout, offline, invalid arguments", async (t) => {
  const s = await setup(t, { DEVICE_COMMAND_TIMEOUT_SECONDS: "1" });
  const send = (type: string, args: Record<string, unknown>) =>
    s.client.api.sendDeviceCommand({ params: s.ids, body: { type, args } });
  await assert.rejects(
    send("gpio_read", { pin: 2 }),
    (e: any) => e.code === "device_offline" && e.status === 409,
  );
  const dev = await online(t, s);
  dev.ws.on("message", (data) => {
    const m = JSON.parse(data.toString());
    if (m.type === "gpio_read") dev.send({ type: "result", id: m.id, value: { value: 1 } });
    if (m.type === "i2c_read")
      dev.send({ type: "error", id: m.id, code: "io_error", message: "no ACK from 0x50" });
    if (m.type === "adc_read") dev.send({ type: "result", id: m.id, value: { volts: 99 } });
  });
  assert.deepEqual(await send("gpio_read", { pin: 2 }), { value: { value: 1 } });
  await assert.rejects(send("i2c_read", { bus: 0, address: 0x50, length: 2 }), (e: any) => {
    assert.equal(e.code, "device_error");
    assert.match(e.message, /no ACK from 0x50/);
    return true;
  });
  await assert.rejects(
    send("adc_read", { pin: 26 }),
    (e: any) => e.code === "device_error" && /invalid result/.test(e.message),
  );
  await assert.rejects(
    send("gpio_toggle", { pin: 3 }),
    (e: any) => e.code === "device_timeout" && e.status === 504,
  );
  await assert.rejects(send("gpio_write", { pin: 2, value: 7 }), (e: any) => e.code === "invalid_argument");
  // The board's pin tables, as the device library and the firmware check them: GPIO 23 is not on
  // the header, GP1 cannot be an I2C0 data line, GP2 has no ADC.
  for (const [type, args, problem] of [
    ["gpio_write", { pin: 23, value: 1 }, /GPIO/],
    ["i2c_configure", { bus: 0, sda: 1, scl: 5, frequency: 100_000 }, /I2C0 SDA/],
    ["adc_read", { pin: 2 }, /ADC|26/],
  ] as const) {
    await assert.rejects(send(type, args), (e: any) => {
      assert.equal(e.code, "invalid_argument");
      assert.match(e.message, problem);
      return true;
    });
  }
  await assert.rejects(
    send("launch_rockets", {}),
    (e: any) => e.code === "invalid_argument" && /unknown command/.test(e.message),
  );
  await assert.rejects(
    send("i2c_write", { bus: 0, address: 0x50, data: new Array(6000).fill(100) }),
    (e: any) => /accepts at most 16384/.test(e.message),
  );
  const commands = dev.inbox.messages.filter((m) => m.id && m.type !== "error").map((m) => m.type);
  assert.deepEqual(
    commands,
    ["gpio_read", "i2c_read", "adc_read", "gpio_toggle"],
    "invalid commands never reach the device",
  );
});

test("a device's own state reports are stored and readable over REST, with history", async (t) => {
  const s = await setup(t);
  const dev = await online(t, s);
  for (const v of [20, 21, 22.5]) dev.send({ type: "state", entityId: "temperature", value: v });
  dev.send({ type: "state", entityId: "door", value: { open: true } });
  dev.send({ type: "state", entityId: "bad id!", value: 1 });
  await dev.inbox.next((m) => m.type === "error" && m.code === "invalid_message");
  await waitUntil(async () => (await s.client.api.getDeviceState({ params: s.ids })).length === 2);
  const state = await s.client.api.getDeviceState({ params: s.ids });
  assert.deepEqual(
    state.map((v) => [v.entityId, v.value]),
    [
      ["door", { open: true }],
      ["temperature", 22.5],
    ],
  );
  const history = await s.client.api.getStateHistory({ params: { ...s.ids, entityId: "temperature" } });
  assert.deepEqual(
    history.map((h) => h.value),
    [22.5, 21, 20],
  );
  const page = await s.client.api.getStateHistory({
    params: { ...s.ids, entityId: "temperature" },
    query: { limit: 1, before: history[0]!.id },
  });
  assert.deepEqual(
    page.map((h) => h.value),
    [21],
  );
});

test("logs are bounded per device and paged newest first", async (t) => {
  const s = await setup(t, { DEVICE_LOG_MAX_ENTRIES: "60" });
  const dev = await online(t, s);
  for (let i = 0; i < 200; i++) dev.send({ type: "log", level: "info", message: `line ${i}` });
  await waitUntil(
    async () => (await s.client.api.listDeviceLogs({ params: s.ids }))[0]?.message === "line 199",
  );
  const all = await s.client.api.listDeviceLogs({ params: s.ids, query: { limit: 500 } });
  assert.ok(all.length <= 60 + 50, `bounded (${all.length})`);
  assert.ok(all.length >= 60);
  const first = await s.client.api.listDeviceLogs({ params: s.ids, query: { limit: 10 } });
  const second = await s.client.api.listDeviceLogs({
    params: s.ids,
    query: { limit: 10, before: first[9]!.id },
  });
  assert.deepEqual(
    [...first, ...second].map((l) => l.message),
    Array.from({ length: 20 }, (_, i) => `line ${199 - i}`),
  );
});
