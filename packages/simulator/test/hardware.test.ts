import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { FakeConnection, Message } from "@sdk/conformance";
import { DeviceLog, GpioChange, StateReport, UartRx } from "@sdk/protocol";
import { Tmp102 } from "../src/index.ts";
import { connectedDevice } from "./helpers/setup.ts";

const changes = (conn: FakeConnection) => conn.messages.filter((m) => m.type === "gpio_change");

/**
 * Frames on one socket arrive in order, so once the answer to a later command arrived, any event
 * the device sent before it has arrived too: this proves that something was NOT sent.
 */
async function settle(conn: FakeConnection): Promise<void> {
  await conn.ok("temperature_read");
}

describe("GPIO", () => {
  test("inputs follow pulls and what drives them; outputs follow writes", async (t) => {
    const { conn, device } = await connectedDevice(t);
    await conn.ok("pin_mode", { pin: 5, mode: "input", pull: "up" });
    assert.deepEqual(await conn.ok("gpio_read", { pin: 5 }), { value: 1 }, "pull-up, nothing driving");
    device.setInput(5, 0);
    assert.deepEqual(await conn.ok("gpio_read", { pin: 5 }), { value: 0 });
    device.setInput(5, null);
    assert.deepEqual(await conn.ok("gpio_read", { pin: 5 }), { value: 1 });
    await conn.ok("pin_mode", { pin: 5, mode: "input", pull: "down" });
    assert.deepEqual(await conn.ok("gpio_read", { pin: 5 }), { value: 0 });
    assert.equal(device.pin(5).pull, "down");

    await conn.ok("pin_mode", { pin: 6, mode: "output" });
    await conn.ok("gpio_write", { pin: 6, value: 1 });
    assert.deepEqual(device.pin(6), {
      pin: 6,
      function: "gpio",
      mode: "output",
      pull: "none",
      output: 1,
      driven: null,
      level: 1,
      pwm: null,
      watch: null,
    });
    assert.deepEqual(await conn.ok("gpio_toggle", { pin: 6 }), { value: 0 });
    assert.deepEqual(
      device.history(6).map((h) => h.value),
      [1, 0],
    );
    // Writing a pin that is not an output makes it one.
    await conn.ok("gpio_write", { pin: 7, value: 1 });
    assert.equal(device.pin(7).mode, "output");

    assert.throws(() => device.setInput(23, 1), RangeError);
    assert.throws(() => device.pin(29), RangeError);
  });

  test("LED transitions are recorded with their times (a blink cadence)", async (t) => {
    let clock = 1_000;
    const { conn, device } = await connectedDevice(t, { now: () => clock });
    for (let i = 0; i < 6; i++) {
      await conn.ok("gpio_toggle", { pin: "LED" });
      clock += 500;
    }
    await conn.ok("gpio_write", { pin: "LED", value: 0 }); // already 0: not a transition
    const history = device.ledHistory;
    assert.deepEqual(
      history.map((h) => h.value),
      [1, 0, 1, 0, 1, 0],
    );
    assert.deepEqual(
      history.slice(1).map((h, i) => h.at - history[i]!.at),
      [500, 500, 500, 500, 500],
    );
  });

  test("watched inputs report matching edges only", async (t) => {
    const { conn, device } = await connectedDevice(t);
    await conn.ok("pin_mode", { pin: 10, mode: "input", pull: "down" });
    await conn.ok("gpio_watch", { pin: 10, edge: "rising" });
    assert.deepEqual(device.pin(10).watch, { edge: "rising", debounceMs: 0 });
    device.setInput(10, 1);
    device.setInput(10, 0); // falling: not reported
    device.setInput(10, 1);
    await conn.message((m) => m.type === "gpio_change" && changes(conn).length === 2);
    await settle(conn);
    assert.deepEqual(changes(conn), [
      { type: "gpio_change", pin: 10, value: 1 },
      { type: "gpio_change", pin: 10, value: 1 },
    ]);
    for (const change of changes(conn)) GpioChange.parse(change);

    await conn.ok("gpio_watch", { pin: 10, edge: "falling" });
    device.setInput(10, 0);
    device.setInput(10, 1); // rising: not reported now
    await settle(conn);
    assert.deepEqual(changes(conn).slice(2), [{ type: "gpio_change", pin: 10, value: 0 }]);

    await conn.ok("gpio_watch", { pin: 11, edge: "both" });
    device.setInput(11, 1);
    device.setInput(11, 0);
    await settle(conn);
    assert.deepEqual(
      changes(conn)
        .slice(3)
        .map((m) => [m.pin, m.value]),
      [
        [11, 1],
        [11, 0],
      ],
    );

    await conn.ok("gpio_unwatch", { pin: 11 });
    await conn.ok("gpio_unwatch", { pin: 10 });
    device.setInput(11, 1);
    device.setInput(10, 0);
    await settle(conn);
    assert.equal(changes(conn).length, 5, "no events after unwatch");
    assert.equal(device.pin(11).watch, null);
  });

  test("a debounced watch reports once the level has settled", async (t) => {
    const { conn, device } = await connectedDevice(t);
    await conn.ok("gpio_watch", { pin: 12, edge: "both", debounceMs: 30 });
    device.setInput(12, 1);
    device.setInput(12, 0);
    device.setInput(12, 1); // bouncing: one change in the end
    await conn.message((m) => m.type === "gpio_change");
    device.setInput(12, 0);
    device.setInput(12, 1);
    device.setInput(12, 0);
    await conn.message((m) => m.type === "gpio_change" && m.value === 0);
    await settle(conn);
    assert.equal(device.history(12).length, 6, "six level changes on the pin");
    assert.deepEqual(changes(conn), [
      { type: "gpio_change", pin: 12, value: 1 },
      { type: "gpio_change", pin: 12, value: 0 },
    ]);
  });

  test("PWM frequency and duty are readable per pin", async (t) => {
    const { conn, device } = await connectedDevice(t);
    await conn.ok("pwm", { pin: 16, frequency: 50, duty: 0.075 });
    assert.equal(device.pin(16).function, "pwm");
    assert.deepEqual(device.pin(16).pwm, { frequency: 50, duty: 0.075 });
    await conn.ok("pin_mode", { pin: 16, mode: "output" });
    assert.equal(device.pin(16).pwm, null, "pin_mode takes the pin back from PWM");
  });
});

describe("ADC and temperature", () => {
  test("voltages are clamped to 0–3.3 V and read as 12-bit samples", async (t) => {
    const { conn, device } = await connectedDevice(t);
    assert.deepEqual(await conn.ok("adc_read", { pin: 26 }), { volts: 0, raw: 0 });
    device.setVoltage(26, 1.65);
    assert.deepEqual(await conn.ok("adc_read", { pin: 26 }), { volts: 1.6504, raw: 2048 });
    device.setVoltage(27, 5);
    assert.deepEqual(await conn.ok("adc_read", { pin: 27 }), { volts: 3.3, raw: 4095 });
    device.setVoltage(28, -1);
    assert.deepEqual(await conn.ok("adc_read", { pin: 28 }), { volts: 0, raw: 0 });
    assert.throws(() => device.setVoltage(25, 1), RangeError);

    assert.deepEqual(await conn.ok("temperature_read"), { celsius: 21.5 });
    device.setTemperature(-4.25);
    assert.deepEqual(await conn.ok("temperature_read"), { celsius: -4.25 });
  });
});

describe("I2C", () => {
  test("scan finds the sensor and the EEPROM; the TMP102 reports its temperature", async (t) => {
    const { conn, device } = await connectedDevice(t);
    assert.equal((await conn.command("i2c_scan", { bus: 0 })).code, "invalid_argument", "not configured yet");
    await conn.ok("i2c_configure", { bus: 0, sda: 4, scl: 5, frequency: 100_000 });
    assert.equal(device.pin(4).function, "i2c");
    assert.deepEqual(await conn.ok("i2c_scan", { bus: 0 }), { addresses: [0x48, 0x50] });

    assert.deepEqual(await conn.ok("i2c_read", { bus: 0, address: 0x48, length: 2, register: 0 }), {
      data: [0x15, 0x80],
    });
    device.tmp102(0)!.celsius = -10.25;
    const { data } = (await conn.ok("i2c_read", { bus: 0, address: 0x48, length: 2, register: 0 })) as {
      data: [number, number];
    };
    assert.equal(Tmp102.decode(data[0], data[1]), -10.25);
    // Configuration register, then the pointer stays where it was set.
    await conn.ok("i2c_write", { bus: 0, address: 0x48, data: [0x01] });
    assert.deepEqual(await conn.ok("i2c_read", { bus: 0, address: 0x48, length: 2 }), { data: [0x60, 0xa0] });
  });

  test("the EEPROM stores what is written and reads it back from a start address", async (t) => {
    const { conn, device } = await connectedDevice(t);
    await conn.ok("i2c_configure", { bus: 1, sda: 6, scl: 7, frequency: 400_000 });
    await conn.ok("i2c_write", { bus: 1, address: 0x50, data: [0x10, 1, 2, 3] });
    assert.deepEqual(await conn.ok("i2c_read", { bus: 1, address: 0x50, length: 4, register: 0x10 }), {
      data: [1, 2, 3, 0xff],
    });
    await conn.ok("i2c_write", { bus: 1, address: 0x50, data: [0xfe, 7, 8, 9] }); // wraps at 256
    assert.deepEqual(await conn.ok("i2c_read", { bus: 1, address: 0x50, length: 3, register: 0xfe }), {
      data: [7, 8, 9],
    });
    assert.equal(device.eeprom(1)!.memory[0], 9);
    assert.equal(device.eeprom(0)!.memory[0x10], 0xff, "each bus has its own chips");
  });

  test("absent addresses NACK with io_error", async (t) => {
    const { conn, device } = await connectedDevice(t);
    await conn.ok("i2c_configure", { bus: 0, sda: 0, scl: 1, frequency: 100_000 });
    for (const [type, args] of [
      ["i2c_read", { bus: 0, address: 0x49, length: 1 }],
      ["i2c_write", { bus: 0, address: 0x3c, data: [0] }],
    ] as const) {
      const reply = await conn.command(type, args);
      assert.equal(reply.code, "io_error");
      assert.match(String(reply.message), /NACK/);
    }
    device.i2c(0).detach(0x50);
    assert.deepEqual(await conn.ok("i2c_scan", { bus: 0 }), { addresses: [0x48] });
    assert.equal((await conn.command("i2c_read", { bus: 0, address: 0x50, length: 1 })).code, "io_error");
  });
});

describe("SPI, UART and WS2812", () => {
  test("SPI loops MISO back to MOSI and drives chip select", async (t) => {
    const { conn, device } = await connectedDevice(t);
    assert.equal((await conn.command("spi_transfer", { bus: 0, data: [1] })).code, "invalid_argument");
    await conn.ok("spi_configure", { bus: 0, sck: 18, tx: 19, rx: 16, frequency: 8_000_000, mode: 3 });
    assert.deepEqual(await conn.ok("spi_transfer", { bus: 0, data: [0xde, 0xad, 0xbe, 0xef], cs: 17 }), {
      data: [0xde, 0xad, 0xbe, 0xef],
    });
    assert.deepEqual(
      device.history(17).map((h) => h.value),
      [1],
      "cs idles high after the transfer",
    );
    assert.deepEqual(device.spi(0).transfers.at(-1)?.cs, 17);
    device.spi(0).respond = (sent) => sent.map((b) => b ^ 0xff);
    assert.deepEqual(await conn.ok("spi_transfer", { bus: 0, data: [0x0f] }), { data: [0xf0] });
  });

  test("UART writes come back as uart_rx; the library injects received bytes", async (t) => {
    const { conn, device } = await connectedDevice(t);
    assert.equal((await conn.command("uart_write", { uart: 1, data: [1] })).code, "invalid_argument");
    assert.throws(() => device.receiveUart(1, [1]), /not configured/);
    await conn.ok("uart_configure", { uart: 1, tx: 8, rx: 9, baud: 9600 });
    assert.deepEqual(device.uart(1).config, {
      tx: 8,
      rx: 9,
      baud: 9600,
      dataBits: 8,
      parity: "none",
      stopBits: 1,
    });

    const from = conn.messages.length;
    await conn.ok("uart_write", { uart: 1, data: [104, 105, 10] });
    const echoed = await conn.message((m) => m.type === "uart_rx", 5_000, from);
    assert.deepEqual(echoed, { type: "uart_rx", uart: 1, data: [104, 105, 10] });
    UartRx.parse(echoed);
    assert.deepEqual(device.uart(1).written, [104, 105, 10]);

    device.receiveUart(1, [0x4f, 0x4b]);
    await conn.message((m) => m.type === "uart_rx" && (m.data as number[])[0] === 0x4f);

    // Long input is split into several messages, each well under the frame limit.
    const long = Array.from({ length: 10_000 }, (_, i) => i % 256);
    const before = conn.messages.length;
    device.receiveUart(1, long);
    await conn.message(() => collected(conn.messages.slice(before)).length === long.length);
    assert.deepEqual(collected(conn.messages.slice(before)), long);
  });

  test("WS2812 pixels are readable per pin", async (t) => {
    const { conn, device } = await connectedDevice(t);
    const pixels = [
      [255, 0, 0],
      [0, 255, 0],
      [0, 0, 255],
    ];
    await conn.ok("ws2812_write", { pin: 22, pixels });
    assert.deepEqual(device.pixels(22), pixels);
    assert.equal(device.pin(22).function, "ws2812");
    assert.equal(device.pixels(21), undefined);
  });
});

describe("device → server messages", () => {
  test("logs, state and custom events arrive as the protocol defines them", async (t) => {
    const { conn, device } = await connectedDevice(t);
    assert.equal(device.sendLog("warn", "battery low"), true);
    assert.equal(device.sendState("sensor.temp_1", { celsius: 21.5 }), true);
    assert.equal(device.sendEvent("button_pressed", { count: 3 }), true);
    device.sendRaw("{not json");
    await conn.message((m) => m.type === "__unparsable");
    const [log, state, custom, raw] = conn.messages;
    assert.deepEqual(DeviceLog.parse(log), { type: "log", level: "warn", message: "battery low" });
    assert.deepEqual(StateReport.parse(state), {
      type: "state",
      entityId: "sensor.temp_1",
      value: { celsius: 21.5 },
    });
    assert.deepEqual(custom, { type: "button_pressed", count: 3 });
    assert.equal((raw as Message).text, "{not json");

    assert.throws(() => device.sendState("bad id!", 1), RangeError);
    assert.throws(() => device.sendEvent("gpio_change", {}), RangeError);
    assert.throws(() => device.sendEvent("ButtonPressed", {}), RangeError);
    assert.throws(() => device.sendEvent("welcome", {}), RangeError);
    assert.throws(() => device.sendEvent("x_y", { type: "z" }), RangeError);
    assert.throws(() => device.sendLog("loud" as "info", "x"));
    device.sendLog("info", "é".repeat(5_000));
    const cut = await conn.message((m) => m.type === "log" && m.level === "info");
    assert.equal((cut.message as string).length, 4096);
  });
});

function collected(messages: Message[]): number[] {
  return messages.filter((m) => m.type === "uart_rx").flatMap((m) => m.data as number[]);
}
