import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  type Board,
  boards,
  type CommandType,
  commandResults,
  commandTypes,
  DeviceError,
  maxFrameBytes,
  protocolVersion,
} from "@sdk/protocol";
import { CommandError, FrameTooLargeError, noReply, simulatorVersion } from "../src/index.ts";
import { connectedDevice } from "./helpers/setup.ts";

/** One valid call of every command, in an order that configures buses before using them. */
const samples: [CommandType, Record<string, unknown>][] = [
  ["pin_mode", { pin: 15, mode: "input", pull: "up" }],
  ["gpio_write", { pin: "LED", value: 1 }],
  ["gpio_read", { pin: 15 }],
  ["gpio_toggle", { pin: 14 }],
  ["gpio_watch", { pin: 15, edge: "both", debounceMs: 5 }],
  ["gpio_unwatch", { pin: 15 }],
  ["pwm", { pin: 16, frequency: 1000, duty: 0.5 }],
  ["adc_read", { pin: 26 }],
  ["temperature_read", {}],
  ["i2c_configure", { bus: 0, sda: 4, scl: 5, frequency: 400_000 }],
  ["i2c_write", { bus: 0, address: 0x50, data: [0, 1, 2] }],
  ["i2c_read", { bus: 0, address: 0x48, length: 2, register: 0 }],
  ["i2c_scan", { bus: 0 }],
  ["spi_configure", { bus: 1, sck: 10, tx: 11, rx: 12, frequency: 1_000_000, mode: 0 }],
  ["spi_transfer", { bus: 1, data: [1, 2, 3], cs: 13 }],
  ["uart_configure", { uart: 0, tx: 0, rx: 1, baud: 115200, dataBits: 8, parity: "none", stopBits: 1 }],
  ["uart_write", { uart: 0, data: [104, 105] }],
  ["ws2812_write", { pin: 22, pixels: [[255, 0, 0]] }],
];

const boardNames = Object.keys(boards) as Board[];

describe("commands", () => {
  test("the samples cover every command of the protocol", () => {
    assert.deepEqual(new Set(samples.map(([type]) => type)), new Set(commandTypes));
  });

  test("the hello carries the simulator's firmware; every command is recorded with its answer", async (t) => {
    const { conn, device } = await connectedDevice(t);
    assert.deepEqual(conn.hello, {
      type: "hello",
      protocol: protocolVersion,
      firmware: `sim-${simulatorVersion}`,
      board: "pico_w",
      maxFrame: maxFrameBytes - 1,
    });
    for (const [type, args] of samples) {
      const reply = await conn.command(type, args);
      assert.equal(reply.type, "result", `${type}: ${JSON.stringify(reply)}`);
      commandResults[type].parse(reply.value);
    }
    assert.deepEqual(
      device.commands.map((c) => c.type),
      samples.map(([type]) => type),
    );
    const record = device.commandsOf("pwm")[0]!;
    assert.deepEqual(record.args, { pin: 16, frequency: 1000, duty: 0.5 });
    assert.deepEqual(record.reply, { value: null });
    assert.equal(typeof record.at, "number");
  });

  for (const board of boardNames) {
    test(`${board}: arguments outside the schema or the board's pin tables are invalid_argument`, async (t) => {
      const { conn, device } = await connectedDevice(t, { board });
      const bad: [string, Record<string, unknown>][] = [
        ["gpio_write", { pin: 23, value: 1 }], // wireless chip power, not on the header
        ["gpio_read", { pin: 25 }],
        ["pin_mode", { pin: 29, mode: "input" }],
        ["gpio_write", { pin: 5, value: 2 }],
        ["gpio_write", { pin: "LED2", value: 1 }],
        ["pin_mode", { pin: 5, mode: "sideways" }],
        ["gpio_watch", { pin: "LED", edge: "both" }],
        ["gpio_watch", { pin: 24, edge: "rising" }],
        ["pwm", { pin: "LED", frequency: 1000, duty: 0.5 }],
        ["pwm", { pin: 3, frequency: 2, duty: 0.5 }],
        ["pwm", { pin: 3, frequency: 1000, duty: 1.5 }],
        ["adc_read", { pin: 25 }],
        ["adc_read", { pin: 4 }],
        ["i2c_configure", { bus: 0, sda: 2, scl: 3, frequency: 100_000 }], // GP2/3 are I2C1
        ["i2c_configure", { bus: 1, sda: 2, scl: 2, frequency: 100_000 }],
        ["i2c_configure", { bus: 2, sda: 0, scl: 1, frequency: 100_000 }],
        ["i2c_read", { bus: 0, address: 0x48, length: 0 }],
        ["i2c_write", { bus: 0, address: 0x03, data: [] }],
        ["spi_configure", { bus: 1, sck: 2, tx: 3, rx: 4, frequency: 1_000_000 }], // SPI0 pins
        ["spi_configure", { bus: 0, sck: 2, tx: 3, rx: 5, frequency: 1_000_000 }],
        ["spi_transfer", { bus: 0, data: [1], cs: 23 }],
        ["spi_transfer", { bus: 0, data: [256] }],
        ["uart_configure", { uart: 0, tx: 4, rx: 5, baud: 9600 }], // UART1 pins
        ["uart_configure", { uart: 1, tx: 4, rx: 5, baud: 12345 }],
        ["ws2812_write", { pin: 23, pixels: [[0, 0, 0]] }],
        ["ws2812_write", { pin: 2, pixels: [] }],
        ["ws2812_write", { pin: "LED", pixels: [[1, 2, 3]] }],
      ];
      for (const [type, args] of bad) {
        const reply = await conn.command(type, args);
        assert.equal(reply.type, "error", `${type} ${JSON.stringify(args)} was accepted`);
        assert.equal(reply.code, "invalid_argument", `${type} ${JSON.stringify(args)}: ${reply.code}`);
        assert.ok(typeof reply.message === "string" && reply.message.length > 0);
        DeviceError.parse(reply);
      }
      // Nothing reached the hardware.
      assert.equal(device.pin(5).function, null);
      assert.equal(device.pin(3).function, null);
      assert.equal(device.pixels(2), undefined);
      assert.equal(device.i2c(0).config, null);

      const tables = boards[board];
      const sda = (await conn.command("i2c_configure", { bus: 1, sda: 3, scl: 2, frequency: 100_000 }))
        .message as string;
      assert.match(sda, new RegExp(`GP${tables.i2c[1].sda[0]}`), "the message lists the valid pins");
    });
  }

  test("the onboard LED is a plain output: readable, writable, toggled, never an input", async (t) => {
    const { conn, device } = await connectedDevice(t);
    assert.equal(device.led, 0);
    assert.equal(await conn.ok("pin_mode", { pin: "LED", mode: "output" }), null);
    assert.equal(await conn.ok("gpio_write", { pin: "LED", value: 1 }), null);
    assert.equal(device.led, 1);
    assert.deepEqual(await conn.ok("gpio_read", { pin: "LED" }), { value: 1 });
    assert.deepEqual(await conn.ok("gpio_toggle", { pin: "LED" }), { value: 0 });
    assert.equal(device.led, 0);
    const input = await conn.command("pin_mode", { pin: "LED", mode: "input" });
    assert.equal(input.code, "unsupported");
    assert.deepEqual(
      device.ledHistory.map((h) => h.value),
      [1, 0],
    );
  });

  test("frames that cannot be parsed get a malformed error; unknown commands are unsupported", async (t) => {
    const { conn, device } = await connectedDevice(t);
    const errorsFrom = () => conn.messages.filter((m) => m.type === "error");
    conn.send("this is not json");
    conn.send("[1,2,3]");
    conn.send(JSON.stringify({ id: 3 }));
    conn.send(JSON.stringify({ type: "gpio_read", pin: 2 })); // no id
    conn.send(JSON.stringify({ type: "gpio_read", id: 0, pin: 2 }));
    conn.ws.send(Buffer.from([1, 2, 3]), { binary: true });
    await conn.message((m) => m.type === "error" && /binary/.test(String(m.message)));
    const malformed = errorsFrom();
    assert.equal(malformed.length, 6);
    for (const error of malformed) {
      assert.equal(error.code, "malformed");
      assert.equal("id" in error, false);
      DeviceError.parse(error);
    }

    const unknown = await conn.command("self_destruct", { seconds: 3 });
    assert.equal(unknown.type, "error");
    assert.equal(unknown.code, "unsupported");
    DeviceError.parse(unknown);
    // The device still works, and recorded what it received.
    assert.deepEqual(await conn.ok("gpio_read", { pin: 2 }), { value: 0 });
    assert.deepEqual(
      device.commands.map((c) => [c.type, c.id]),
      [
        ["gpio_read", null],
        ["gpio_read", null],
        ["self_destruct", 1],
        ["gpio_read", 2],
      ],
    );
  });

  test("server error frames are surfaced, not answered", async (t) => {
    const { conn, device } = await connectedDevice(t);
    const seen = device.waitFor("serverError");
    conn.send({ type: "error", code: "invalid_message", message: "log: level: Invalid option" });
    assert.deepEqual(await seen, { code: "invalid_message", message: "log: level: Invalid option" });
    await conn.ok("gpio_read", { pin: 1 });
    assert.equal(conn.messages.filter((m) => m.type === "error").length, 0);
  });

  test("commands can be overridden: an error, a late answer, or no answer at all", async (t) => {
    const { conn, device } = await connectedDevice(t);
    device.handle("i2c_scan", () => {
      throw new CommandError("io_error", "bus stuck low");
    });
    assert.deepEqual(await conn.command("i2c_scan", { bus: 0 }), {
      type: "error",
      id: 1,
      code: "io_error",
      message: "bus stuck low",
    });
    device.handle("temperature_read", async () => ({ celsius: 99 }));
    assert.deepEqual(await conn.ok("temperature_read"), { celsius: 99 });

    device.handle("gpio_read", () => noReply);
    const held = device.waitFor("command", (c) => c.type === "gpio_read");
    conn.send({ type: "gpio_read", id: 50, pin: 3 });
    assert.equal((await held).reply, null);
    device.handle("gpio_read", null);
    assert.deepEqual(await conn.ok("gpio_read", { pin: 3 }), { value: 0 });
    assert.equal(conn.messages.filter((m) => m.id === 50).length, 0, "the held command was never answered");

    // Arguments are still validated before an override runs.
    assert.equal((await conn.command("temperature_read", { extra: 1 })).type, "result");
    device.handle("pwm", () => ({ ignored: true }));
    assert.equal((await conn.command("pwm", { pin: 23, frequency: 100, duty: 0 })).code, "invalid_argument");
  });

  test("no frame of 64 KB or more is ever sent", async (t) => {
    const { conn, device } = await connectedDevice(t);
    device.handle("spi_transfer", () => ({ data: new Array(16_384).fill(255) }));
    await conn.ok("spi_configure", { bus: 0, sck: 2, tx: 3, rx: 4, frequency: 1_000_000 });
    const reply = await conn.command("spi_transfer", { bus: 0, data: [1] });
    assert.equal(reply.type, "error");
    assert.equal(reply.code, "unsupported");
    assert.match(String(reply.message), /frame/);

    assert.throws(() => device.sendRaw("x".repeat(maxFrameBytes)), FrameTooLargeError);
    assert.throws(() => device.sendEvent("blob", { data: "y".repeat(maxFrameBytes) }), FrameTooLargeError);
    assert.equal(device.sendRaw("x".repeat(maxFrameBytes - 1)), true);
    await conn.message((m) => m.type === "__unparsable");
    assert.equal(Math.max(...conn.frameSizes), maxFrameBytes - 1);
  });

  test("a command larger than the announced maxFrame closes the socket with 1009", async (t) => {
    const { conn, device } = await connectedDevice(t, { maxFrame: 1024, reconnect: false });
    assert.equal(conn.hello?.maxFrame, 1024);
    conn.send({ type: "spi_transfer", id: 1, bus: 0, data: new Array(600).fill(200) });
    const [closed] = await Promise.all([conn.closed, device.waitFor("disconnected")]);
    assert.equal(closed.code, 1009);
  });
});
