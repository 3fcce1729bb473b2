import assert from "node:assert/strict";
import { describe, type TestContext, test } from "node:test";
import {
  type Board,
  type CommandType,
  commandResults,
  commandTypes,
  DeviceError,
  DeviceResult,
  deviceCloseCodes,
  deviceSocketPath,
  deviceSocketUrl,
  Hello,
  protocolVersion,
  restartCloseReason,
} from "@sdk/protocol";
import { deployScript, startTestServer, waitUntil, within } from "@sdk/test-helpers";
import type { DeviceFactory, DeviceUnderTest } from "./device-under-test.ts";
import {
  deviceOnFakeServer,
  fakeDeviceId,
  fakeSecret,
  nextAttemptAfter,
  testTiming,
  waitMs,
} from "./fake-device-server.ts";
import type { FakeConnection } from "./fake-server.ts";

const boards: Board[] = ["pico_w", "pico2_w"];
const { backoffBaseMs, backoffCapMs } = testTiming;

/** One valid call of every command, in an order that configures buses before using them. */
const samples: [CommandType, Record<string, unknown>][] = [
  ["pin_mode", { pin: 15, mode: "input", pull: "up" }],
  ["gpio_read", { pin: 15 }],
  ["gpio_write", { pin: "LED", value: 1 }],
  ["gpio_toggle", { pin: "LED" }],
  ["gpio_watch", { pin: 15, edge: "both", debounceMs: 5 }],
  ["gpio_unwatch", { pin: 15 }],
  ["pwm", { pin: 16, frequency: 1000, duty: 0.5 }],
  ["adc_read", { pin: 26 }],
  ["temperature_read", {}],
  ["i2c_configure", { bus: 0, sda: 4, scl: 5, frequency: 400_000 }],
  ["i2c_scan", { bus: 0 }],
  ["i2c_write", { bus: 0, address: 0x3c, data: [0, 1, 2] }],
  ["i2c_read", { bus: 0, address: 0x3c, length: 3 }],
  ["spi_configure", { bus: 1, sck: 10, tx: 11, rx: 12, frequency: 1_000_000, mode: 0 }],
  ["spi_transfer", { bus: 1, data: [1, 2, 3], cs: 13 }],
  ["uart_configure", { uart: 1, tx: 4, rx: 5, baud: 115200, dataBits: 8, parity: "none", stopBits: 1 }],
  ["uart_write", { uart: 1, data: [104, 105] }],
  [
    "ws2812_write",
    {
      pin: 22,
      pixels: [
        [255, 0, 0],
        [0, 0, 9],
      ],
    },
  ],
];

/** Pins neither board brings out (23–25 drive the wireless chip, 29 measures VSYS), used where a GPIO is meant. */
const missingGpios = [23, 24, 25, 29];

/** Commands every board must refuse with `invalid_argument`. */
function invalidCommands(): [CommandType, Record<string, unknown>][] {
  const perPin = missingGpios.flatMap((pin): [CommandType, Record<string, unknown>][] => [
    ["pin_mode", { pin, mode: "output" }],
    ["gpio_write", { pin, value: 1 }],
    ["gpio_read", { pin }],
    ["gpio_toggle", { pin }],
    ["gpio_watch", { pin, edge: "both" }],
    ["pwm", { pin, frequency: 1000, duty: 0.5 }],
    ["ws2812_write", { pin, pixels: [[1, 2, 3]] }],
    ["spi_transfer", { bus: 0, data: [1], cs: pin }],
  ]);
  return [
    ...perPin,
    ["adc_read", { pin: 4 }], // not an ADC pin
    ["adc_read", { pin: 25 }],
    ["i2c_configure", { bus: 0, sda: 1, scl: 5, frequency: 100_000 }], // GP1 is SCL-only
    ["i2c_configure", { bus: 1, sda: 3, scl: 7, frequency: 100_000 }], // GP3 is SCL-only
    ["i2c_configure", { bus: 0, sda: 2, scl: 3, frequency: 100_000 }], // GP2/3 belong to I2C1
    ["spi_configure", { bus: 1, sck: 2, tx: 3, rx: 4, frequency: 1_000_000 }], // SPI0's pins
    ["uart_configure", { uart: 0, tx: 4, rx: 5, baud: 9600 }], // UART1's pins
    ["gpio_watch", { pin: "LED", edge: "both" }], // the LED is output only
    ["pwm", { pin: 3, frequency: 1000, duty: 1.5 }],
    ["gpio_write", { pin: 5, value: 2 }],
  ];
}

async function ok(conn: FakeConnection, type: CommandType, args: Record<string, unknown>): Promise<unknown> {
  const reply = await conn.command(type, args, waitMs);
  assert.equal(reply.type, "result", `${type} ${JSON.stringify(args)}: ${JSON.stringify(reply)}`);
  DeviceResult.parse(reply);
  const checked = commandResults[type].safeParse(reply.value ?? null);
  assert.ok(checked.success, `${type}: result ${JSON.stringify(reply.value)} does not fit its schema`);
  return reply.value ?? null;
}

/**
 * Registers the conformance suite for one device implementation: `factory` starts a device under
 * test. Every case starts its own device and its own server, so cases are independent.
 */
export function deviceConformance(name: string, factory: DeviceFactory): void {
  describe(`device conformance: ${name}`, () => {
    for (const board of boards) {
      describe(board, () => {
        commandCases(factory, board);
      });
    }
    describe("events", () => eventCases(factory));
    describe("connection", () => connectionCases(factory));
    describe("with the real server", () => realServerCases(factory));
  });
}

function commandCases(factory: DeviceFactory, board: Board): void {
  test("hello: the first frame names the protocol, firmware, board and largest frame", async (t) => {
    const { conn } = await deviceOnFakeServer(t, factory, board);
    const hello = Hello.parse(conn.hello);
    assert.equal(hello.protocol, protocolVersion);
    assert.equal(hello.board, board);
    assert.equal(new URL(conn.request.url!, "http://x").pathname, deviceSocketPath);
    assert.equal(
      conn.request.headers.authorization,
      `Basic ${Buffer.from(`${fakeDeviceId}:${fakeSecret}`).toString("base64")}`,
    );
  });

  test("every command is answered with a result its schema accepts, on the hardware", async (t) => {
    assert.deepEqual(
      new Set(samples.map(([type]) => type)),
      new Set(commandTypes),
      "samples cover every command",
    );
    const { conn, device } = await deviceOnFakeServer(t, factory, board);
    await device.attachI2c(0, 0x3c, [7, 8, 9, 10]);
    const values = new Map<CommandType, unknown>();
    for (const [type, args] of samples) {
      values.set(type, await ok(conn, type, args));
      if (type === "gpio_read") {
        assert.deepEqual(values.get(type), { value: 1 }, "a pulled-up input reads 1");
        await device.setInput(15, 0);
        assert.deepEqual(await ok(conn, "gpio_read", { pin: 15 }), { value: 0 }, "a driven input reads 0");
      }
      if (type === "gpio_write") assert.equal((await device.readPin("LED")).level, 1);
    }
    assert.deepEqual(values.get("gpio_toggle"), { value: 0 });
    assert.equal((await device.readPin("LED")).level, 0);
    assert.deepEqual((await device.readPin(16)).pwm, { frequency: 1000, duty: 0.5 });
    assert.ok((values.get("i2c_scan") as { addresses: number[] }).addresses.includes(0x3c));
    assert.deepEqual(values.get("i2c_read"), { data: [7, 8, 9] });
    assert.equal((values.get("spi_transfer") as { data: number[] }).data.length, 3);
    assert.deepEqual(await device.readPixels(22), [
      [255, 0, 0],
      [0, 0, 9],
    ]);
  });

  test("pins and buses the board does not have are invalid_argument", async (t) => {
    const { conn } = await deviceOnFakeServer(t, factory, board);
    for (const [type, args] of invalidCommands()) {
      const reply = await conn.command(type, args, waitMs);
      assert.equal(reply.type, "error", `${type} ${JSON.stringify(args)} was accepted`);
      DeviceError.parse(reply);
      assert.equal(reply.code, "invalid_argument", `${type} ${JSON.stringify(args)}: ${reply.code}`);
    }
  });

  test("unknown commands get an error; the LED is no input; commands without an id are malformed", async (t) => {
    const { conn } = await deviceOnFakeServer(t, factory, board);
    const unknown = await conn.command("self_destruct", { seconds: 3 }, waitMs);
    assert.equal(unknown.type, "error");
    DeviceError.parse(unknown);
    const ledInput = await conn.command("pin_mode", { pin: "LED", mode: "input" }, waitMs);
    assert.equal(ledInput.type, "error");
    assert.equal(ledInput.code, "unsupported");
    const from = conn.messages.length;
    conn.send({ type: "gpio_read", pin: 2 });
    const malformed = await conn.message((m) => m.type === "error", waitMs, from);
    assert.equal(malformed.code, "malformed");
    assert.equal("id" in malformed, false);
    await ok(conn, "gpio_read", { pin: 2 });
  });
}

function eventCases(factory: DeviceFactory): void {
  test("a gpio_change caused by a command arrives after that command's result", async (t) => {
    const { conn } = await deviceOnFakeServer(t, factory, "pico_w");
    await ok(conn, "pin_mode", { pin: 8, mode: "output" });
    await ok(conn, "gpio_write", { pin: 8, value: 0 });
    await ok(conn, "gpio_watch", { pin: 8, edge: "both" });
    const from = conn.messages.length;
    await ok(conn, "gpio_write", { pin: 8, value: 1 });
    await conn.message((m) => m.type === "gpio_change", waitMs, from);
    assert.deepEqual(
      conn.messages.slice(from).map((m) => m.type),
      ["result", "gpio_change"],
    );
    assert.deepEqual(conn.messages.at(-1), { type: "gpio_change", pin: 8, value: 1 });
  });

  test("a watched input reports the edges it is watched for; UART bytes arrive as uart_rx", async (t) => {
    const { conn, device } = await deviceOnFakeServer(t, factory, "pico_w");
    await ok(conn, "pin_mode", { pin: 15, mode: "input", pull: "up" });
    await ok(conn, "gpio_watch", { pin: 15, edge: "falling" });
    const from = conn.messages.length;
    await device.setInput(15, 0);
    const change = await conn.message((m) => m.type === "gpio_change", waitMs, from);
    assert.deepEqual(change, { type: "gpio_change", pin: 15, value: 0 });
    await device.setInput(15, 1); // a rising edge: not reported
    await device.setInput(15, 0);
    await waitUntil(() => conn.messages.filter((m) => m.type === "gpio_change").length >= 2, waitMs);
    assert.ok(conn.messages.filter((m) => m.type === "gpio_change").every((m) => m.value === 0));

    await ok(conn, "uart_configure", { uart: 0, tx: 0, rx: 1, baud: 9600 });
    const rxFrom = conn.messages.length;
    await device.receiveUart(0, [0x4f, 0x4b]);
    const rx = await conn.message((m) => m.type === "uart_rx", waitMs, rxFrom);
    assert.deepEqual(rx, { type: "uart_rx", uart: 0, data: [0x4f, 0x4b] });
  });
}

function connectionCases(factory: DeviceFactory): void {
  test("heartbeat: the device answers every ping with a pong carrying the same data", async (t) => {
    const { conn } = await deviceOnFakeServer(t, factory, "pico_w");
    for (const payload of ["a", "b", "c"]) {
      const pong = new Promise<string>((resolve) => conn.ws.once("pong", (data) => resolve(data.toString())));
      conn.ws.ping(payload);
      assert.equal(await within(pong, waitMs, "a pong"), payload);
    }
  });

  test("silence: with no ping or frame for 2.5 × heartbeatSeconds the device drops the connection and reconnects", async (t) => {
    const { server, conn } = await deviceOnFakeServer(t, factory, "pico_w", { heartbeatSeconds: 1 });
    const welcomedAt = performance.now();
    await within(conn.closed, waitMs, "the device to drop a silent server");
    const silentFor = performance.now() - welcomedAt;
    assert.ok(silentFor >= 2_000, `dropped after ${Math.round(silentFor)} ms, before 2.5 heartbeats`);
    const again = await server.nextConnection(waitMs);
    Hello.parse(again.hello);
  });

  test("1001 and 1006: the device reconnects with growing, capped delays, never in a tight loop", async (t) => {
    const { server, conn } = await deviceOnFakeServer(t, factory, "pico_w");
    conn.ws.close(1001, "server shutting down");
    let current = await server.nextConnection(waitMs);
    current.ws.terminate(); // 1006: no close frame
    current = await server.nextConnection(waitMs);

    const delays: number[] = [];
    for (let i = 0; i < 7; i++) {
      const seen = server.attempts.length;
      const closedAt = performance.now();
      current.ws.close(1001, "server shutting down");
      const delay = await nextAttemptAfter(server, seen, closedAt, backoffCapMs + waitMs);
      assert.notEqual(delay, null, `no reconnect after close ${i + 1}`);
      delays.push(delay!);
      current = await server.nextConnection(waitMs);
    }
    t.diagnostic(`delays ${delays.map(Math.round).join(", ")} ms`);
    // Full jitter draws each delay below min(cap, base·2ⁿ): with seven draws, at least one is above
    // the base unless the device retries at once (chance 2⁻²¹ for a conforming one).
    assert.ok(
      delays.some((d) => d > backoffBaseMs),
      "every retry came within the base delay: no backoff",
    );
  });

  test("1012 service restart: the device retries within the reason's hint window, not its backoff", async (t) => {
    const { server, conn } = await deviceOnFakeServer(t, factory, "pico_w");
    // A window above the test backoff cap: a device that ignores the hint retries sooner.
    const hint = { minMs: backoffCapMs + 500, maxMs: backoffCapMs + 800 };
    let current = conn;
    for (let i = 0; i < 2; i++) {
      const seen = server.attempts.length;
      const closedAt = performance.now();
      current.ws.close(deviceCloseCodes.serviceRestart, restartCloseReason(hint.minMs, hint.maxMs));
      const delay = await nextAttemptAfter(server, seen, closedAt, hint.maxMs + waitMs);
      assert.notEqual(delay, null, `no reconnect after 1012 number ${i + 1}`);
      assert.ok(
        delay! >= hint.minMs,
        `retried ${Math.round(delay!)} ms after 1012, before the hint's ${hint.minMs} ms`,
      );
      current = await server.nextConnection(waitMs);
    }
  });

  test("4000 replaced: the device waits at least the backoff cap before trying again", async (t) => {
    const { server, conn } = await deviceOnFakeServer(t, factory, "pico_w");
    const seen = server.attempts.length;
    const closedAt = performance.now();
    conn.ws.close(4000, "replaced by a new connection");
    const delay = await nextAttemptAfter(server, seen, closedAt, backoffCapMs * 3 + waitMs);
    assert.notEqual(delay, null, "the device never tried again after 4000");
    assert.ok(
      delay! >= backoffCapMs * 0.95,
      `retried ${Math.round(delay!)} ms after 4000 (cap ${backoffCapMs})`,
    );
  });

  test("4001 revoked: the device stops using its credentials", async (t) => {
    const { server, conn } = await deviceOnFakeServer(t, factory, "pico_w");
    const seen = server.attempts.length;
    const closedAt = performance.now();
    conn.ws.close(4001, "credentials rotated");
    await assertStopped(server, seen, closedAt);
  });

  test("HTTP 401: the device stops using its credentials", async (t) => {
    const { server } = await deviceOnFakeServer(t, factory, "pico_w", {
      secret: "wrong-secret",
      awaitHello: false,
    });
    await server.waitForAttempts(1, waitMs);
    assert.equal(server.attempts[0]!.accepted, false);
    await assertStopped(server, 1, server.attempts[0]!.at);
  });

  test("1009: a frame over the announced maxFrame closes the socket with 1009; the device reconnects", async (t) => {
    const { server, conn } = await deviceOnFakeServer(t, factory, "pico_w");
    const maxFrame = Hello.parse(conn.hello).maxFrame;
    conn.send({ type: "spi_transfer", id: 1, bus: 0, data: [], pad: "x".repeat(maxFrame) });
    const closed = await within(conn.closed, waitMs, "the device to close the socket");
    assert.equal(closed.code, 1009);
    const again = await server.nextConnection(waitMs);
    await ok(again, "gpio_read", { pin: 2 });
  });
}

/** After 4001 or 401 the device stops, or retries no more often than the backoff cap. */
async function assertStopped(
  server: Parameters<typeof nextAttemptAfter>[0],
  seen: number,
  closedAt: number,
): Promise<void> {
  const delay = await nextAttemptAfter(server, seen, closedAt, backoffCapMs * 2);
  if (delay !== null) {
    assert.ok(delay >= backoffCapMs * 0.95, `retried ${Math.round(delay)} ms later (cap ${backoffCapMs})`);
  }
}

async function realWorld(t: TestContext, factory: DeviceFactory, board: Board) {
  const s = await startTestServer(t);
  const { client } = await s.user();
  const project = await client.api.createProject({ body: { name: "conformance" } });
  const { device, credentials } = await client.api.createDevice({
    params: { projectId: project.id },
    body: { name: "device under test", board },
  });
  const ids = { projectId: project.id, deviceId: device.id };
  const start = async (): Promise<DeviceUnderTest> => {
    const dut = await factory({
      url: deviceSocketUrl(new URL(s.url).host),
      deviceId: device.id,
      secret: credentials.secret,
      board,
      timing: testTiming,
    });
    t.after(() => dut.stop());
    return dut;
  };
  const online = () =>
    waitUntil(
      async () => (await client.api.getDevice({ params: ids })).status === "online",
      waitMs,
      "the device to be online",
    );
  return { ...s, client, project, ids, start, online };
}

function realServerCases(factory: DeviceFactory): void {
  for (const board of boards) {
    test(`${board}: hello/welcome brings the device online; every command works through the REST API`, async (t) => {
      const w = await realWorld(t, factory, board);
      const device = await w.start();
      await w.online();
      const seen = await w.client.api.getDevice({ params: w.ids });
      assert.equal(seen.board, board);
      assert.ok(seen.firmwareVersion, "the firmware from hello is recorded");

      await device.attachI2c(0, 0x3c, [7, 8, 9]);
      for (const [type, args] of samples) {
        const { value } = await w.client.api.sendDeviceCommand({ params: w.ids, body: { type, args } });
        const checked = commandResults[type].safeParse(value);
        assert.ok(checked.success, `${type}: result ${JSON.stringify(value)} does not fit its schema`);
      }
      assert.deepEqual(await device.readPixels(22), [
        [255, 0, 0],
        [0, 0, 9],
      ]);

      const refused = (type: CommandType, args: Record<string, unknown>, code: string) =>
        assert.rejects(
          w.client.api.sendDeviceCommand({ params: w.ids, body: { type, args } }),
          (e: { code?: string }) => {
            assert.equal(e.code, code, `${type} ${JSON.stringify(args)}`);
            return true;
          },
        );
      await refused("i2c_read", { bus: 0, address: 0x33, length: 1 }, "device_error"); // nothing acknowledges
      await refused("gpio_write", { pin: 23, value: 1 }, "invalid_argument");
    });
  }

  test("a deployed script drives the device: it writes a pin on connect and reports a button as state", async (t) => {
    const w = await realWorld(t, factory, "pico_w");
    await deployScript(
      t,
      w.client,
      w.project.id,
      `import { DeviceScript, GP15, OnboardLED } from "@sdk/device";
export default class Conformance extends DeviceScript {
  async onDeviceConnect() {
    await this.env.DEVICE.pinMode(GP15, "input", "up");
    await this.env.DEVICE.watchPin(GP15, "both");
    await this.env.DEVICE.gpioWrite(OnboardLED, 1);
    this.env.DEVICE.emitState("ready", true);
  }
  async onMessage(msg) {
    if (msg.type === "gpio_change") this.env.DEVICE.emitState("button", msg.value);
  }
}
`,
    );
    const device = await w.start();
    const state = async () =>
      Object.fromEntries(
        (await w.client.api.getDeviceState({ params: w.ids })).map((v) => [v.entityId, v.value]),
      );
    await waitUntil(async () => (await state()).ready === true, waitMs, "the script's onDeviceConnect");
    assert.equal((await device.readPin("LED")).level, 1);
    await device.setInput(15, 0);
    await waitUntil(async () => (await state()).button === 0, waitMs, "button = 0 from gpio_change");
    await device.setInput(15, 1);
    await waitUntil(async () => (await state()).button === 1, waitMs, "button = 1 from gpio_change");
  });
}
