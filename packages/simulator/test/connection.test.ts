import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { FakeServer } from "@sdk/conformance";
import { deviceCloseCodes, deviceSocketUrl, restartCloseReason, restartRetry } from "@sdk/protocol";
import { within as withTimeout } from "@sdk/test-helpers";
import { Backoff } from "../src/backoff.ts";
import { defaultReconnect, SimulatedDevice } from "../src/index.ts";
import { connectedDevice, deviceId, secret } from "./helpers/setup.ts";

describe("server address → device socket URL", () => {
  test("host:port is plain ws://; a bare host is wss:// on the implicit port 443", () => {
    assert.equal(deviceSocketUrl("127.0.0.1:8080"), "ws://127.0.0.1:8080/v1/device");
    assert.equal(deviceSocketUrl("localhost:3000"), "ws://localhost:3000/v1/device");
    assert.equal(deviceSocketUrl("sdk.example.com"), "wss://sdk.example.com/v1/device");
    assert.equal(deviceSocketUrl(" sdk.example.com/ "), "wss://sdk.example.com/v1/device");
    assert.equal(deviceSocketUrl("https://sdk.example.com"), "wss://sdk.example.com/v1/device");
    assert.equal(deviceSocketUrl("http://10.0.0.2:8080"), "ws://10.0.0.2:8080/v1/device");
    assert.equal(deviceSocketUrl("wss://sdk.example.com:8443/"), "wss://sdk.example.com:8443/v1/device");
    assert.equal(deviceSocketUrl("[::1]:8080"), "ws://[::1]:8080/v1/device");
  });

  test("the device connects to that URL", () => {
    const device = (server: string) => new SimulatedDevice({ server, deviceId, secret });
    assert.equal(device("pico.local").url, "wss://pico.local/v1/device");
    assert.equal(device("pico.local:8080").url, "ws://pico.local:8080/v1/device");
  });

  test("options that would make an invalid hello are refused up front", () => {
    const base = { server: "h:1", deviceId, secret };
    assert.throws(() => new SimulatedDevice({ ...base, firmware: "x".repeat(65) }), /firmware/);
    assert.throws(() => new SimulatedDevice({ ...base, maxFrame: 64 * 1024 }), /maxFrame/);
    assert.throws(() => new SimulatedDevice({ ...base, maxFrame: 100 }), /maxFrame/);
    assert.throws(() => new SimulatedDevice({ ...base, board: "pico3" as "pico_w" }), /board/);
    assert.throws(() => new SimulatedDevice({ ...base, deviceId: "a:b" }), /deviceId/);
  });
});

describe("backoff", () => {
  test("ceilings double from the base up to the cap; full jitter stays below them", () => {
    const exact = new Backoff({ ...defaultReconnect, jitter: "none" });
    assert.deepEqual(
      Array.from({ length: 10 }, () => exact.next()),
      [250, 500, 1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000],
    );
    exact.reset();
    assert.equal(exact.next(), 250);

    let seed = 1;
    const random = () => {
      seed = (seed * 16807) % 2147483647;
      return seed / 2147483647;
    };
    const jittered = new Backoff({ ...defaultReconnect, random });
    for (let n = 0; n < 200; n++) {
      const ceiling = jittered.ceiling();
      const delay = jittered.next();
      assert.ok(delay >= 0 && delay < ceiling, `delay ${delay} within [0, ${ceiling})`);
    }
  });

  test("a quick window draws in [min, max) until it ends, then the backoff goes on", () => {
    let r = 0;
    const backoff = new Backoff({ ...defaultReconnect, random: () => r });
    backoff.quick(1_000, 30_000, 100, 1_000);
    r = 0;
    assert.equal(backoff.next(1_000), 100);
    r = 0.999_999;
    assert.equal(backoff.next(30_999), 999);
    assert.equal(backoff.next(31_000), 999, "after the window: the backoff, from n = 2");
    assert.equal(backoff.next(31_001), 1_999);

    const capped = new Backoff({ ...defaultReconnect, jitter: "none" });
    for (let n = 0; n < 6; n++) capped.next();
    capped.capFor(0, 10_000, 2_000);
    assert.equal(capped.next(5_000), 2_000, "the ceiling is at most 2 s in the window");
    assert.equal(capped.next(10_000), 30_000, "then the normal ceiling again");
    capped.quick(0, 10_000, 10, 20);
    capped.endQuick();
    assert.equal(capped.next(1), 30_000);
  });

  test("a quick window's retries count: when it ends, the backoff goes on from the n reached", () => {
    const backoff = new Backoff({ ...defaultReconnect, jitter: "none" });
    backoff.quick(0, 30_000, 100, 1_000);
    for (let i = 0; i < 5; i++) assert.equal(backoff.next(i * 1_000), 1_000);
    assert.equal(backoff.failures, 5);
    // Not 250 ms for the whole fleet at once: the ceiling it would have reached failing all along.
    assert.equal(backoff.next(30_000), 250 * 2 ** 5);
    assert.equal(backoff.next(40_000), 16_000);
    assert.equal(backoff.next(60_000), 30_000);
    backoff.reset();
    assert.equal(backoff.next(90_000), 250, "a stable connection resets it");
  });
});

describe("connection", () => {
  test("401 surfaces the server's message and stops", async (t) => {
    const server = await FakeServer.start({ credentials: { [deviceId]: secret } });
    const device = new SimulatedDevice({ server: server.address, deviceId, secret: "wrong" });
    t.after(async () => {
      await device.stop();
      await server.close();
    });
    const failure = device.waitFor("authFailed");
    const idle = device.waitFor("idle");
    device.start();
    assert.deepEqual(await failure, {
      status: 401,
      code: "invalid_device_credentials",
      message: "Invalid device credentials",
    });
    await idle;
    assert.equal(device.status, "stopped");
    assert.equal(server.attempts.length, 1);
  });

  test("after the server drops the connection the device reconnects and says hello again", async (t) => {
    const { server, device, conn } = await connectedDevice(t);
    const disconnected = device.waitFor("disconnected");
    const reconnected = device.waitFor("connected");
    conn.ws.terminate();
    assert.equal((await disconnected).code, 1006);
    await reconnected;
    const second = await server.nextConnection();
    assert.notEqual(second, conn);
    assert.equal(second.hello?.board, "pico_w");
    assert.deepEqual(await second.ok("gpio_read", { pin: 2 }), { value: 0 });

    // A close frame from the server (here: replaced) also ends in a reconnect.
    const replaced = device.waitFor("disconnected");
    const again = device.waitFor("connected");
    second.ws.close(4000, "replaced by a new connection");
    assert.deepEqual(await replaced, { code: 4000, reason: "replaced by a new connection" });
    await again;
    assert.equal(device.connected, true);
    assert.equal(server.attempts.filter((a) => a.accepted).length, 3);
  });

  test("1012 (service restart): the device retries within the hinted window, not with backoff", async (t) => {
    const { server, device, conn } = await connectedDevice(t, {
      reconnect: { baseMs: 15, capMs: 1_000, jitter: "none", resetAfterMs: 60_000 },
    });
    const delays: number[] = [];
    device.on("reconnecting", ({ delayMs }) => delays.push(delayMs));
    let current = conn;
    // 0-50 ms is clamped to the floor: nothing is left of it, so the default applies as well.
    const reasons = [
      restartCloseReason(150, 300),
      restartCloseReason(150, 300),
      "restarting",
      restartCloseReason(0, 50),
    ];
    for (const reason of reasons) {
      const back = device.waitFor("connected");
      current.ws.close(deviceCloseCodes.serviceRestart, reason);
      await back;
      current = await server.nextConnection();
    }
    // jitter "none" draws the top of the window; a reason without a hint uses the protocol's default.
    assert.deepEqual(delays, [300, 300, restartRetry.maxMs, restartRetry.maxMs]);
  });

  test("a connection that stayed up long enough resets the backoff", async (t) => {
    const run = async (resetAfterMs: number) => {
      const { server, device, conn } = await connectedDevice(t, {
        reconnect: { baseMs: 15, capMs: 1_000, jitter: "none", resetAfterMs },
      });
      const delays: number[] = [];
      device.on("reconnecting", ({ delayMs }) => delays.push(delayMs));
      let current = conn;
      for (let i = 0; i < 3; i++) {
        const back = device.waitFor("connected");
        current.ws.terminate();
        await back;
        current = await server.nextConnection();
      }
      return delays;
    };
    assert.deepEqual(await run(0), [15, 15, 15]);
    assert.deepEqual(await run(60_000), [15, 30, 60]);
  });

  test("stop() closes with 1000 and stays down", async (t) => {
    const { server, device, conn } = await connectedDevice(t);
    await device.stop();
    assert.equal((await conn.closed).code, 1000);
    assert.equal(device.status, "stopped");
    assert.equal(device.connected, false);
    assert.equal(device.sendLog("info", "anyone?"), false);
    assert.equal(server.attempts.length, 1);
  });

  test("kill() drops the TCP socket without a close frame", async (t) => {
    const { server, device, conn } = await connectedDevice(t);
    const idle = device.waitFor("idle");
    device.kill();
    const closed = await conn.closed;
    assert.equal(closed.code, 1006, "the server got no close frame");
    await idle;
    assert.equal(device.status, "stopped");

    // A network drop instead of a power cut: the device comes back by itself.
    const back = device.waitFor("connected");
    device.start();
    await back;
    const second = await server.nextConnection();
    const reconnected = device.waitFor("connected");
    device.kill({ reconnect: true });
    assert.equal((await second.closed).code, 1006);
    await reconnected;
    assert.equal(server.attempts.length, 3);
  });

  test("a frozen device answers neither pings nor commands", async (t) => {
    const { device, conn } = await connectedDevice(t);
    let pongs = 0;
    conn.ws.on("pong", () => pongs++);
    device.freeze();
    const ignored: string[] = [];
    device.on("ignored", ({ what }) => ignored.push(what));
    conn.ws.ping();
    conn.send({ type: "gpio_read", id: 100, pin: 1 });
    await device.waitFor(() => ignored.length === 2);
    assert.deepEqual(ignored, ["ping", "frame"]);
    device.freeze(false);
    assert.deepEqual(await conn.ok("gpio_read", { pin: 1 }), { value: 0 });
    assert.equal(pongs, 0, "the ping sent while frozen got no pong");
    assert.equal(conn.messages.filter((m) => m.id === 100).length, 0);
    assert.deepEqual(
      device.commands.map((c) => c.id),
      [1],
    );
    const pong = withTimeout(new Promise((resolve) => conn.ws.once("pong", resolve)), 5_000, "a pong");
    conn.ws.ping();
    await pong;
  });

  test("silence from the server past the heartbeat timeout drops the connection", async (t) => {
    // The watchdog runs on real timers: its timeout is far above any event-loop stall of this
    // process (which also runs the fake server), and the pings are spaced well within it.
    const timeoutMs = 2_000;
    const { server, device, conn } = await connectedDevice(t, { heartbeatTimeoutMs: timeoutMs });
    const disconnects: unknown[] = [];
    device.on("disconnected", (d) => disconnects.push(d));
    // Pings keep it up, for longer than the timeout.
    const started = performance.now();
    while (performance.now() - started < timeoutMs * 1.25) {
      const pong = withTimeout(new Promise((resolve) => conn.ws.once("pong", resolve)), 15_000, "a pong");
      conn.ws.ping();
      await pong;
      await new Promise((resolve) => setTimeout(resolve, timeoutMs / 4));
    }
    assert.deepEqual(disconnects, [], "pings kept the connection up");
    const error = device.waitFor("error", 15_000);
    const back = device.waitFor("connected", 15_000);
    assert.match((await error).message, /nothing from the server/);
    assert.equal((await conn.closed).code, 1006);
    await back;
    await server.nextConnection();
  });

  test("no welcome within the welcome timeout drops the connection and retries", async (t) => {
    const server = await FakeServer.start({ credentials: { [deviceId]: secret }, welcome: false });
    const device = new SimulatedDevice({
      server: server.address,
      deviceId,
      secret,
      welcomeTimeoutMs: 50,
      reconnect: { baseMs: 10, capMs: 50 },
    });
    t.after(async () => {
      await device.stop();
      await server.close();
    });
    // The status as the socket opens: later, the 50 ms welcome timeout may already have fired.
    const statusWhenOpen = new Promise((resolve) => device.once("open", () => resolve(device.status)));
    device.start();
    assert.equal(await statusWhenOpen, "handshaking");
    const first = await server.nextConnection();
    assert.equal((await first.closed).code, 1006);
    await server.nextConnection();
    assert.equal(device.connected, false);
  });

  test("reconnect: false stays down after the first connection ends", async (t) => {
    const { server, device, conn } = await connectedDevice(t, { reconnect: false });
    const idle = device.waitFor("idle");
    conn.ws.close(1001, "going away");
    assert.deepEqual(await device.waitFor("disconnected"), { code: 1001, reason: "going away" });
    await idle;
    assert.equal(device.status, "stopped");
    assert.equal(server.attempts.length, 1);
  });

  test("an unreachable server is retried; waitFor times out with a clear message", async (t) => {
    const server = await FakeServer.start({ credentials: {} });
    const address = server.address;
    await server.close();
    const device = new SimulatedDevice({
      server: address,
      deviceId,
      secret,
      reconnect: { baseMs: 5, capMs: 20 },
    });
    t.after(() => device.stop());
    const errors: string[] = [];
    device.on("error", (e) => errors.push(e.message));
    device.start();
    await device.waitFor("reconnecting", (r) => r.attempt >= 3);
    assert.ok(errors.some((m) => /ECONNREFUSED/.test(m)));
    await assert.rejects(device.waitFor("connected", 30), /timed out after 30 ms waiting for "connected"/);
    await assert.rejects(
      device.waitFor(() => device.connected, 30),
      /timed out after 30 ms waiting for a condition/,
    );
  });
});
