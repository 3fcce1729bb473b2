import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { type CommandType, commandResults, commandTypes } from "@sdk/protocol";
import { SimulatedDevice } from "@sdk/simulator";
import { waitUntil } from "@sdk/test-helpers";
import { startTestServer } from "./helpers/server.ts";
import { openSocket, wsUrl } from "./helpers/sockets.ts";

type T = Parameters<typeof startTestServer>[0];

async function setup(
  t: T,
  options: Parameters<typeof startTestServer>[1] = {},
  board: "pico_w" | "pico2_w" = "pico_w",
) {
  const s = await startTestServer(t, options);
  const { client } = await s.user();
  const project = await client.api.createProject({ body: { name: "p" } });
  const { device, credentials } = await client.api.createDevice({
    params: { projectId: project.id },
    body: { name: "d", board },
  });
  const ids = { projectId: project.id, deviceId: device.id };
  const host = new URL(s.url).host; // host:port → plain ws:// by the URL rule
  const simulator = (reconnect: false | { baseMs: number } = false) => {
    const sim = new SimulatedDevice({
      server: host,
      deviceId: device.id,
      secret: credentials.secret,
      board,
      reconnect,
    });
    t.after(() => sim.stop());
    return sim;
  };
  const watch = () =>
    openSocket(t, wsUrl(s.url, `/v1/projects/${project.id}/devices/${device.id}/watch`), {
      headers: { authorization: `Bearer ${client.token}` },
    });
  return { ...s, client, project, device, credentials, ids, simulator, watch };
}

test("a simulated board goes online and offline on the watch socket in real time", async (t) => {
  const s = await setup(t);
  const watch = await s.watch();
  await watch.inbox.type("snapshot");
  const sim = s.simulator().start();
  await sim.waitFor("connected");
  await watch.inbox.next((m) => m.type === "status" && m.status === "online");
  assert.equal((await s.client.api.getDevice({ params: s.ids })).status, "online");
  await sim.stop();
  const offline = await watch.inbox.next((m) => m.type === "status" && m.status === "offline");
  assert.match(offline.reason, /device stopped/);
});

test("wrong secret: the simulator is told 'Invalid device credentials' and backs off", async (t) => {
  const s = await setup(t);
  const sim = new SimulatedDevice({
    server: new URL(s.url).host,
    deviceId: s.device.id,
    secret: "dsk_wrong",
    reconnect: { baseMs: 20, capMs: 200 },
  });
  t.after(() => sim.stop());
  sim.start();
  const failure = await sim.waitFor("authFailed");
  assert.equal(failure.status, 401);
  assert.equal(failure.message, "Invalid device credentials");
  await sim.waitFor("reconnecting");
  assert.equal((await s.client.api.getDevice({ params: s.ids })).status, "offline");
});

test("killing the simulator process (no close frame) turns the device offline within the heartbeat bound", async (t) => {
  const s = await setup(t, { env: { HEARTBEAT_SECONDS: "1" } });
  const watch = await s.watch();
  await watch.inbox.type("snapshot");
  const cli = fileURLToPath(new URL("../../simulator/src/cli.ts", import.meta.url));
  const child = spawn(
    process.execPath,
    [
      cli,
      "--server",
      new URL(s.url).host,
      "--device",
      s.device.id,
      "--secret",
      s.credentials.secret,
      "--quiet",
    ],
    { stdio: "ignore" },
  );
  t.after(() => child.kill("SIGKILL"));
  await watch.inbox.next((m) => m.type === "status" && m.status === "online", 10_000);
  const killedAt = Date.now();
  child.kill("SIGKILL");
  await watch.inbox.next((m) => m.type === "status" && m.status === "offline", 5000);
  const elapsed = Date.now() - killedAt;
  t.diagnostic(`offline ${elapsed}ms after SIGKILL`);
  assert.ok(elapsed < 3000, "within two missed heartbeats of 1 s");
});

test("a frozen board (socket open, nothing answered) goes offline after two missed heartbeats", async (t) => {
  const s = await setup(t, { env: { HEARTBEAT_SECONDS: "1" } });
  const watch = await s.watch();
  const sim = s.simulator().start();
  await sim.waitFor("connected");
  await watch.inbox.next((m) => m.type === "status" && m.status === "online");
  sim.freeze();
  const frozenAt = Date.now();
  const offline = await watch.inbox.next((m) => m.type === "status" && m.status === "offline", 6000);
  assert.equal(offline.reason, "heartbeat timeout");
  t.diagnostic(`offline ${Date.now() - frozenAt}ms after freezing`);
});

/** Every command of the protocol, through the REST API, the server, the socket and the simulated hardware. */
test("every command round-trips through the simulator and the results are checked", async (t) => {
  const s = await setup(t, {}, "pico2_w");
  const sim = s.simulator().start();
  await sim.waitFor("connected");
  const run = async (type: CommandType, args: Record<string, unknown>) => {
    const { value } = await s.client.api.sendDeviceCommand({ params: s.ids, body: { type, args } });
    assert.ok(commandResults[type].safeParse(value).success, `${type} result ${JSON.stringify(value)}`);
    return value as any;
  };
  const seen = new Set<string>();
  const cmd = async (type: CommandType, args: Record<string, unknown>) => {
    seen.add(type);
    return run(type, args);
  };

  // GPIO and the onboard LED
  await cmd("pin_mode", { pin: "LED", mode: "output" });
  await cmd("gpio_write", { pin: "LED", value: 1 });
  assert.equal(sim.led, 1);
  assert.deepEqual(await cmd("gpio_toggle", { pin: "LED" }), { value: 0 });
  assert.equal(sim.led, 0);
  await cmd("pin_mode", { pin: 15, mode: "input", pull: "up" });
  assert.deepEqual(await cmd("gpio_read", { pin: 15 }), { value: 1 }, "pull-up reads high");
  sim.setInput(15, 0);
  assert.deepEqual(await cmd("gpio_read", { pin: 15 }), { value: 0 });
  // watching an input produces gpio_change, routed to the device's message listeners
  const routed: unknown[] = [];
  const stop = s.server.services.deviceLink.onMessage((_device, message) => routed.push(message));
  t.after(stop);
  await cmd("gpio_watch", { pin: 15, edge: "rising" });
  sim.setInput(15, 1);
  sim.setInput(15, 0);
  sim.setInput(15, 1);
  await waitUntil(() => routed.length >= 2);
  assert.deepEqual(routed.slice(0, 2), [
    { type: "gpio_change", pin: 15, value: 1 },
    { type: "gpio_change", pin: 15, value: 1 },
  ]);
  await cmd("gpio_unwatch", { pin: 15 });

  // PWM, ADC, temperature
  await cmd("pwm", { pin: 16, frequency: 1000, duty: 0.25 });
  assert.equal(sim.pin(16).pwm?.frequency, 1000);
  assert.equal(sim.pin(16).pwm?.duty, 0.25);
  sim.setVoltage(26, 1.65);
  const adc = await cmd("adc_read", { pin: 26 });
  assert.equal(adc.raw, 2048);
  assert.ok(Math.abs(adc.volts - 1.65) < 0.001);
  sim.setTemperature(30.5);
  assert.deepEqual(await cmd("temperature_read", {}), { celsius: 30.5 });

  // I2C: the virtual TMP102 at 0x48 and EEPROM at 0x50
  await cmd("i2c_configure", { bus: 0, sda: 4, scl: 5, frequency: 400_000 });
  const scan = await cmd("i2c_scan", { bus: 0 });
  assert.deepEqual(scan.addresses, [0x48, 0x50]);
  await cmd("i2c_write", { bus: 0, address: 0x50, data: [0x10, 1, 2, 3] });
  assert.deepEqual(
    (await cmd("i2c_read", { bus: 0, address: 0x50, register: 0x10, length: 3 })).data,
    [1, 2, 3],
  );
  sim.tmp102(0)!.celsius = 30.5;
  const tmp = await cmd("i2c_read", { bus: 0, address: 0x48, register: 0, length: 2 });
  assert.equal((((tmp.data[0] << 8) | tmp.data[1]) >> 4) * 0.0625, 30.5);
  await assert.rejects(
    run("i2c_read", { bus: 0, address: 0x33, length: 1 }),
    (e: any) => e.code === "device_error",
  );

  // SPI and UART loopback
  await cmd("spi_configure", { bus: 0, sck: 2, tx: 3, rx: 4, frequency: 1_000_000 });
  assert.deepEqual((await cmd("spi_transfer", { bus: 0, data: [9, 8, 7] })).data, [9, 8, 7]);
  await cmd("uart_configure", { uart: 0, tx: 0, rx: 1, baud: 115200 });
  await cmd("uart_write", { uart: 0, data: [104, 105] });
  await waitUntil(() => routed.some((m: any) => m.type === "uart_rx"));
  assert.deepEqual(
    routed.find((m: any) => m.type === "uart_rx"),
    { type: "uart_rx", uart: 0, data: [104, 105] },
  );

  // WS2812
  await cmd("ws2812_write", {
    pin: 22,
    pixels: [
      [255, 0, 0],
      [0, 255, 0],
    ],
  });
  assert.deepEqual(sim.pixels(22), [
    [255, 0, 0],
    [0, 255, 0],
  ]);

  assert.deepEqual([...seen].sort(), [...commandTypes].sort(), "every command type was exercised");

  // pins the board does not have are refused by the device, and the server says so
  await assert.rejects(run("gpio_write", { pin: 23, value: 1 }), (e: any) => {
    assert.equal(e.code, "invalid_argument");
    assert.match(e.message, /23/);
    return true;
  });
});

test("logs and state survive a server restart; every device starts offline", async (t) => {
  const s = await setup(t);
  const sim = s.simulator().start();
  await sim.waitFor("connected");
  sim.sendLog("info", "before the restart");
  sim.sendState("humidity", 55);
  await waitUntil(async () => (await s.client.api.getDeviceState({ params: s.ids })).length === 1);
  await s.server.close(); // the device is still connected at this moment

  const again = await startTestServer(t, { dataDir: s.dataDir });
  const client = again.client(s.client.token);
  assert.equal((await client.api.getDevice({ params: s.ids })).status, "offline");
  const logs = await client.api.listDeviceLogs({ params: s.ids });
  assert.ok(logs.some((l) => l.message === "before the restart"));
  assert.deepEqual(
    (await client.api.getDeviceState({ params: s.ids })).map((v) => [v.entityId, v.value]),
    [["humidity", 55]],
  );
});
