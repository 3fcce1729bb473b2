import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  type Board,
  boardPins,
  Device,
  type DeviceBridge,
  GP0,
  GP4,
  GP5,
  GP26,
  GP28,
  OnboardLED,
  SdkError,
} from "../src/index.ts";

interface Recorded {
  commands: { type: string; args: Record<string, unknown> }[];
  states: [entityId: string, valueJson: string][];
  sent: string[];
}

/** A bridge that records everything and answers each command type with a canned result. */
function fakeBridge(answers: Record<string, unknown> = {}): { bridge: DeviceBridge; rec: Recorded } {
  const rec: Recorded = { commands: [], states: [], sent: [] };
  const bridge: DeviceBridge = {
    command(type, args) {
      rec.commands.push({ type, args: structuredClone(args) });
      return Promise.resolve(answers[type] ?? {});
    },
    emitState(entityId, valueJson) {
      rec.states.push([entityId, valueJson]);
    },
    send(messageJson) {
      rec.sent.push(messageJson);
    },
  };
  return { bridge, rec };
}

function setup(board: Board, answers?: Record<string, unknown>) {
  const { bridge, rec } = fakeBridge(answers);
  return { device: new Device(board, bridge), rec };
}

const boardsUnderTest: Board[] = ["pico_w", "pico2_w"];
const boardName = { pico_w: "Raspberry Pi Pico W", pico2_w: "Raspberry Pi Pico 2 W" } as const;
const utf8 = (text: string) => [...new TextEncoder().encode(text)];

/** Asserts `run` throws `SdkError` invalid_argument synchronously, matching `message`, and nothing reached the bridge. */
function assertInvalid(board: Board, run: (device: any) => unknown, message: RegExp) {
  const { device, rec } = setup(board);
  assert.throws(
    () => run(device),
    (error: unknown) => {
      assert.ok(error instanceof SdkError, `expected SdkError, got ${String(error)}`);
      assert.equal(error.name, "SdkError");
      assert.equal(error.code, "invalid_argument");
      assert.equal(error.docs, "/docs/errors#invalid_argument");
      assert.match(error.message, message);
      return true;
    },
  );
  assert.deepEqual(rec, { commands: [], states: [], sent: [] }, "nothing may reach the bridge");
}

for (const board of boardsUnderTest) {
  describe(`Device on ${board}: valid calls send the right command`, () => {
    test("board is kept", () => {
      assert.equal(setup(board).device.board, board);
    });

    test("pinMode: mode, optional pull, the onboard LED", async () => {
      const { device, rec } = setup(board);
      assert.equal(await device.pinMode(2, "output"), undefined);
      await device.pinMode(3, "input", "up");
      await device.pinMode(28, "input", "none");
      await device.pinMode(OnboardLED, "output");
      assert.deepEqual(rec.commands, [
        { type: "pin_mode", args: { pin: 2, mode: "output" } },
        { type: "pin_mode", args: { pin: 3, mode: "input", pull: "up" } },
        { type: "pin_mode", args: { pin: 28, mode: "input", pull: "none" } },
        { type: "pin_mode", args: { pin: "LED", mode: "output" } },
      ]);
    });

    test("gpioWrite: 0/1 and true/false, GPIOs and the LED", async () => {
      const { device, rec } = setup(board);
      await device.gpioWrite("LED", true);
      await device.gpioWrite(OnboardLED, false);
      await device.gpioWrite(GP0, 1);
      await device.gpioWrite(22, 0);
      await device.gpioWrite(GP28, true);
      assert.deepEqual(rec.commands, [
        { type: "gpio_write", args: { pin: "LED", value: 1 } },
        { type: "gpio_write", args: { pin: "LED", value: 0 } },
        { type: "gpio_write", args: { pin: 0, value: 1 } },
        { type: "gpio_write", args: { pin: 22, value: 0 } },
        { type: "gpio_write", args: { pin: 28, value: 1 } },
      ]);
    });

    test("gpioRead and gpioToggle resolve with the level", async () => {
      const { device, rec } = setup(board, { gpio_read: { value: 1 }, gpio_toggle: { value: 0 } });
      assert.equal(await device.gpioRead(7), 1);
      assert.equal(await device.gpioRead("LED"), 1);
      assert.equal(await device.gpioToggle(OnboardLED), 0);
      assert.equal(await device.gpioToggle(27), 0);
      assert.deepEqual(rec.commands, [
        { type: "gpio_read", args: { pin: 7 } },
        { type: "gpio_read", args: { pin: "LED" } },
        { type: "gpio_toggle", args: { pin: "LED" } },
        { type: "gpio_toggle", args: { pin: 27 } },
      ]);
    });

    test("watchPin (default edge, debounce) and unwatchPin", async () => {
      const { device, rec } = setup(board);
      await device.watchPin(14);
      await device.watchPin(15, "rising", 0);
      await device.watchPin(16, "falling", 1000);
      await device.unwatchPin(14);
      assert.deepEqual(rec.commands, [
        { type: "gpio_watch", args: { pin: 14, edge: "both" } },
        { type: "gpio_watch", args: { pin: 15, edge: "rising", debounceMs: 0 } },
        { type: "gpio_watch", args: { pin: 16, edge: "falling", debounceMs: 1000 } },
        { type: "gpio_unwatch", args: { pin: 14 } },
      ]);
    });

    test("pwm, including the limits", async () => {
      const { device, rec } = setup(board);
      await device.pwm(15, 1000, 0.25);
      await device.pwm(0, 8, 0);
      await device.pwm(28, 1_000_000, 1);
      assert.deepEqual(rec.commands, [
        { type: "pwm", args: { pin: 15, frequency: 1000, duty: 0.25 } },
        { type: "pwm", args: { pin: 0, frequency: 8, duty: 0 } },
        { type: "pwm", args: { pin: 28, frequency: 1_000_000, duty: 1 } },
      ]);
    });

    test("adcRead on GP26–GP28 resolves with volts and raw; readTemperature with °C", async () => {
      const { device, rec } = setup(board, {
        adc_read: { volts: 1.65, raw: 2048 },
        temperature_read: { celsius: 21.5 },
      });
      for (const pin of [GP26, 27, GP28] as const) {
        assert.deepEqual(await device.adcRead(pin), { volts: 1.65, raw: 2048 });
      }
      assert.equal(await device.readTemperature(), 21.5);
      assert.deepEqual(rec.commands, [
        { type: "adc_read", args: { pin: 26 } },
        { type: "adc_read", args: { pin: 27 } },
        { type: "adc_read", args: { pin: 28 } },
        { type: "temperature_read", args: {} },
      ]);
    });

    test("I2C: configure, write (array, Uint8Array, string), read (with register), scan", async () => {
      const { device, rec } = setup(board, {
        i2c_read: { data: [1, 2] },
        i2c_scan: { addresses: [0x3c, 0x76] },
      });
      await device.i2cConfigure(0, GP4, GP5);
      await device.i2cConfigure(1, 26, 27, 400_000);
      await device.i2cConfigure(0, 20, 21, 10_000);
      await device.i2cConfigure(1, 2, 3, 1_000_000);
      await device.i2cWrite(0, 0x40, [0, 255]);
      await device.i2cWrite(1, 0x08, new Uint8Array([7, 8]));
      await device.i2cWrite(0, 0x77, "Hi");
      assert.deepEqual(await device.i2cRead(1, 0x48, 2), [1, 2]);
      assert.deepEqual(await device.i2cRead(0, 0x48, 4096, 0), [1, 2]);
      assert.deepEqual(await device.i2cScan(1), [0x3c, 0x76]);
      assert.deepEqual(rec.commands, [
        { type: "i2c_configure", args: { bus: 0, sda: 4, scl: 5, frequency: 100_000 } },
        { type: "i2c_configure", args: { bus: 1, sda: 26, scl: 27, frequency: 400_000 } },
        { type: "i2c_configure", args: { bus: 0, sda: 20, scl: 21, frequency: 10_000 } },
        { type: "i2c_configure", args: { bus: 1, sda: 2, scl: 3, frequency: 1_000_000 } },
        { type: "i2c_write", args: { bus: 0, address: 0x40, data: [0, 255] } },
        { type: "i2c_write", args: { bus: 1, address: 0x08, data: [7, 8] } },
        { type: "i2c_write", args: { bus: 0, address: 0x77, data: [72, 105] } },
        { type: "i2c_read", args: { bus: 1, address: 0x48, length: 2 } },
        { type: "i2c_read", args: { bus: 0, address: 0x48, length: 4096, register: 0 } },
        { type: "i2c_scan", args: { bus: 1 } },
      ]);
    });

    test("SPI: configure (defaults and explicit), transfer with and without cs", async () => {
      const { device, rec } = setup(board, { spi_transfer: { data: [0, 0xef, 0x40] } });
      await device.spiConfigure(0, { sck: 2, tx: 3, rx: 4 });
      await device.spiConfigure(1, { sck: 10, tx: 11, rx: 12 }, 8_000_000, 3);
      await device.spiConfigure(0, { sck: 18, tx: 19, rx: 16 }, 1_000, 0);
      await device.spiConfigure(1, { sck: 26, tx: 27, rx: 28 }, 50_000_000, 2);
      assert.deepEqual(await device.spiTransfer(0, [0x9f, 0, 0], 17), [0, 0xef, 0x40]);
      await device.spiTransfer(1, new Uint8Array([1]));
      assert.deepEqual(rec.commands, [
        { type: "spi_configure", args: { bus: 0, sck: 2, tx: 3, rx: 4, frequency: 1_000_000, mode: 0 } },
        { type: "spi_configure", args: { bus: 1, sck: 10, tx: 11, rx: 12, frequency: 8_000_000, mode: 3 } },
        { type: "spi_configure", args: { bus: 0, sck: 18, tx: 19, rx: 16, frequency: 1_000, mode: 0 } },
        { type: "spi_configure", args: { bus: 1, sck: 26, tx: 27, rx: 28, frequency: 50_000_000, mode: 2 } },
        { type: "spi_transfer", args: { bus: 0, data: [0x9f, 0, 0], cs: 17 } },
        { type: "spi_transfer", args: { bus: 1, data: [1] } },
      ]);
    });

    test("UART: configure (default baud, format) and write", async () => {
      const { device, rec } = setup(board);
      await device.uartConfigure(0, { tx: 0, rx: 1 });
      await device.uartConfigure(1, { tx: 4, rx: 5 }, 9600, { dataBits: 7, parity: "even", stopBits: 2 });
      await device.uartConfigure(0, { tx: 16, rx: 17 }, 300, { dataBits: 5, parity: "none", stopBits: 1 });
      await device.uartConfigure(1, { tx: 20, rx: 21 }, 921_600);
      await device.uartWrite(0, [0, 13, 10, 255]);
      await device.uartWrite(1, new Uint8Array([0xaa]));
      assert.deepEqual(rec.commands, [
        { type: "uart_configure", args: { uart: 0, tx: 0, rx: 1, baud: 115_200 } },
        {
          type: "uart_configure",
          args: { uart: 1, tx: 4, rx: 5, baud: 9600, dataBits: 7, parity: "even", stopBits: 2 },
        },
        {
          type: "uart_configure",
          args: { uart: 0, tx: 16, rx: 17, baud: 300, dataBits: 5, parity: "none", stopBits: 1 },
        },
        { type: "uart_configure", args: { uart: 1, tx: 20, rx: 21, baud: 921_600 } },
        { type: "uart_write", args: { uart: 0, data: [0, 13, 10, 255] } },
        { type: "uart_write", args: { uart: 1, data: [0xaa] } },
      ]);
    });

    test("uartWrite sends a string as UTF-8 bytes (multi-byte characters and emoji)", async () => {
      const { device, rec } = setup(board);
      const texts = ["AT\r\n", "é", "café", "€", "😀", "hé 🌡️ 21°C"];
      for (const text of texts) await device.uartWrite(0, text);
      assert.deepEqual(
        rec.commands.map((c) => c.args.data),
        texts.map(utf8),
      );
      assert.deepEqual(rec.commands[1]!.args.data, [0xc3, 0xa9]);
      assert.deepEqual(rec.commands[4]!.args.data, [0xf0, 0x9f, 0x98, 0x80]);
    });

    test("ws2812Write sends the pixels", async () => {
      const { device, rec } = setup(board);
      const pixels: [number, number, number][] = [
        [255, 0, 0],
        [0, 255, 0],
        [0, 0, 0],
      ];
      await device.ws2812Write(16, pixels);
      const long = Array.from({ length: 1024 }, () => [1, 2, 3] as [number, number, number]);
      await device.ws2812Write(22, long);
      assert.deepEqual(rec.commands, [
        { type: "ws2812_write", args: { pin: 16, pixels } },
        { type: "ws2812_write", args: { pin: 22, pixels: long } },
      ]);
    });

    test("send passes the JSON of the message; nothing is a command", () => {
      const { device, rec } = setup(board);
      assert.equal(device.send({ type: "custom_ping", n: 1, nested: { ok: true } }), undefined);
      device.send({ type: "a" });
      device.send({ type: `x${"y".repeat(63)}` });
      device.send({ type: "blob", data: "x".repeat(60_000) });
      assert.deepEqual(rec.sent.slice(0, 3), [
        '{"type":"custom_ping","n":1,"nested":{"ok":true}}',
        '{"type":"a"}',
        `{"type":"x${"y".repeat(63)}"}`,
      ]);
      assert.equal(rec.sent.length, 4);
      assert.deepEqual(rec.commands, []);
      assert.deepEqual(rec.states, []);
    });

    test("emitState passes the entity id and the JSON of the value", () => {
      const { device, rec } = setup(board);
      device.emitState("temperature", 21.5);
      device.emitState("mode", "auto");
      device.emitState("relay_1", true);
      device.emitState("sensor.air-quality", { pm25: 4, ok: null });
      device.emitState("x".repeat(64), 0);
      device.emitState("big", "x".repeat(8190)); // 8192 bytes of JSON: the limit
      device.emitState("accents", "é".repeat(4095)); // 8190 + 2 bytes
      assert.deepEqual(rec.states.slice(0, 5), [
        ["temperature", "21.5"],
        ["mode", '"auto"'],
        ["relay_1", "true"],
        ["sensor.air-quality", '{"pm25":4,"ok":null}'],
        ["x".repeat(64), "0"],
      ]);
      assert.equal(rec.states.length, 7);
      assert.deepEqual(rec.commands, []);
      assert.deepEqual(rec.sent, []);
    });

    test("command failures from the bridge reject the returned promise unchanged", async () => {
      const failure = new SdkError("device_timeout", "gpio_read: no answer in 5 s");
      const bridge: DeviceBridge = {
        command: () => Promise.reject(failure),
        emitState() {},
        send() {},
      };
      const device = new Device(board, bridge);
      await assert.rejects(device.gpioRead(3), (e) => e === failure);
      await assert.rejects(device.readTemperature(), (e) => e === failure);
    });
  });

  describe(`Device on ${board}: invalid arguments throw SdkError synchronously and send nothing`, () => {
    const notGpio = (pin: unknown, what = "pin") =>
      new RegExp(
        `^${what} ${typeof pin === "string" ? `"${pin}"` : String(pin).replace(".", "\\.")} is not a GPIO of the ${boardName[board]} \\(`,
      );
    const badPins: unknown[] = [23, 24, 25, 29, -1, 1.5, "GP2", NaN, null, undefined, 40];

    test("pins that are not on the board, for every pin-taking method", () => {
      for (const pin of badPins) {
        const m = notGpio(pin);
        assertInvalid(board, (d) => d.pinMode(pin, "output"), m);
        assertInvalid(board, (d) => d.gpioWrite(pin, 1), m);
        assertInvalid(board, (d) => d.gpioRead(pin), m);
        assertInvalid(board, (d) => d.gpioToggle(pin), m);
        assertInvalid(board, (d) => d.watchPin(pin), m);
        assertInvalid(board, (d) => d.unwatchPin(pin), m);
        assertInvalid(board, (d) => d.pwm(pin, 1000, 0.5), m);
        assertInvalid(board, (d) => d.ws2812Write(pin, [[1, 2, 3]]), m);
        // An undefined chip select means "none".
        if (pin !== undefined) assertInvalid(board, (d) => d.spiTransfer(0, [1], pin), notGpio(pin, "cs"));
      }
      // The onboard LED is a digital pin only: no watch, PWM, WS2812 or chip select.
      for (const lowercase of ["led", "Led"]) {
        assertInvalid(board, (d) => d.gpioWrite(lowercase, 1), notGpio(lowercase));
      }
      assertInvalid(board, (d) => d.watchPin("LED"), notGpio("LED"));
      assertInvalid(board, (d) => d.unwatchPin("LED"), notGpio("LED"));
      assertInvalid(board, (d) => d.pwm("LED", 1000, 0.5), notGpio("LED"));
      assertInvalid(board, (d) => d.ws2812Write("LED", [[1, 2, 3]]), notGpio("LED"));
      assertInvalid(board, (d) => d.spiTransfer(0, [1], "LED"), notGpio("LED", "cs"));
    });

    test("the message says GPIO numbers, not physical pin numbers", () => {
      assertInvalid(
        board,
        (d) => d.gpioWrite(25, 1),
        /GPIO numbers 0–22 and 26–28, not physical pin numbers/,
      );
    });

    test("pinMode, gpioWrite, watchPin: bad mode, pull, level, edge, debounce", () => {
      assertInvalid(
        board,
        (d) => d.pinMode(2, "analog"),
        /^mode must be one of input, output \(got "analog"\)/,
      );
      assertInvalid(board, (d) => d.pinMode(2, "OUTPUT"), /^mode must be one of input, output/);
      assertInvalid(board, (d) => d.pinMode(2, "input", "sideways"), /^pull must be one of up, down, none/);
      for (const value of [2, -1, "1", null, undefined, 0.5, "true"]) {
        assertInvalid(board, (d) => d.gpioWrite(2, value), /^value must be 0, 1, true or false \(got /);
      }
      assertInvalid(board, (d) => d.watchPin(2, "up"), /^edge must be one of rising, falling, both/);
      for (const debounce of [-1, 1001, 1.5, "10", NaN]) {
        assertInvalid(board, (d) => d.watchPin(2, "both", debounce), /^debounceMs must be 0–1000/);
      }
    });

    test("adcRead on a pin without an ADC", () => {
      for (const pin of [0, 4, 22, 25, 29, 23, "LED", "GP26", 26.5]) {
        assertInvalid(
          board,
          (d) => d.adcRead(pin),
          /cannot read analog values: the ADC pins are GP26, GP27 and GP28 \(0–3\.3 V\)/,
        );
      }
    });

    test("pwm frequency and duty out of range", () => {
      for (const frequency of [7, 7.99, 0, -1000, 1_000_001, NaN, Infinity, "1000", null]) {
        assertInvalid(board, (d) => d.pwm(2, frequency, 0.5), /^frequency must be 8–1000000 Hz \(got /);
      }
      for (const duty of [-0.01, 1.01, 2, NaN, "0.5", null, undefined]) {
        assertInvalid(board, (d) => d.pwm(2, 1000, duty), /^duty must be 0–1 \(got /);
      }
    });

    test("I2C addresses, lengths, registers and buses", () => {
      assertInvalid(board, (d) => d.i2cWrite(0, 0x07, [1]), /^I2C address must be 0x08–0x77 \(got 0x7\)/);
      assertInvalid(board, (d) => d.i2cWrite(0, 0x78, [1]), /^I2C address must be 0x08–0x77 \(got 0x78\)/);
      for (const address of [0, -1, 0x40 + 0.5, "0x40", 0x100, null]) {
        assertInvalid(board, (d) => d.i2cWrite(0, address, [1]), /^I2C address must be 0x08–0x77/);
        assertInvalid(board, (d) => d.i2cRead(0, address, 1), /^I2C address must be 0x08–0x77/);
      }
      for (const length of [0, -1, 4097, 1.5, "2"]) {
        assertInvalid(board, (d) => d.i2cRead(0, 0x40, length), /^length must be 1–4096/);
      }
      for (const register of [-1, 256, 1.5, "0"]) {
        assertInvalid(board, (d) => d.i2cRead(0, 0x40, 1, register), /^register must be a byte 0–255/);
      }
      for (const bus of [2, -1, "0", 0.5, null, true]) {
        assertInvalid(board, (d) => d.i2cScan(bus), /^bus must be 0 or 1 \(got /);
        assertInvalid(board, (d) => d.i2cWrite(bus, 0x40, [1]), /^bus must be 0 or 1/);
        assertInvalid(board, (d) => d.i2cRead(bus, 0x40, 1), /^bus must be 0 or 1/);
        assertInvalid(board, (d) => d.i2cConfigure(bus, 4, 5), /^bus must be 0 or 1/);
        assertInvalid(board, (d) => d.spiConfigure(bus, { sck: 2, tx: 3, rx: 4 }), /^bus must be 0 or 1/);
        assertInvalid(board, (d) => d.spiTransfer(bus, [1]), /^bus must be 0 or 1/);
        assertInvalid(board, (d) => d.uartConfigure(bus, { tx: 0, rx: 1 }), /^uart must be 0 or 1/);
        assertInvalid(board, (d) => d.uartWrite(bus, [1]), /^uart must be 0 or 1/);
      }
    });

    test("byte data: out of range, non-integers, wrong shape, too long", () => {
      const writers: ((d: any, data: unknown) => unknown)[] = [
        (d, data) => d.i2cWrite(0, 0x40, data),
        (d, data) => d.spiTransfer(0, data),
        (d, data) => d.uartWrite(0, data),
      ];
      for (const write of writers) {
        assertInvalid(board, (d) => write(d, [1, 256]), /^data\[1\] must be a byte 0–255 \(got 256\)/);
        assertInvalid(board, (d) => write(d, [-1]), /^data\[0\] must be a byte 0–255 \(got -1\)/);
        assertInvalid(board, (d) => write(d, [1.5]), /^data\[0\] must be a byte/);
        assertInvalid(board, (d) => write(d, [NaN]), /^data\[0\] must be a byte/);
        assertInvalid(board, (d) => write(d, ["1"]), /^data\[0\] must be a byte 0–255 \(got "1"\)/);
        assertInvalid(board, (d) => write(d, [null]), /^data\[0\] must be a byte/);
        for (const shape of [42, null, undefined, { length: 1, 0: 1 }, new Uint16Array([1])]) {
          assertInvalid(
            board,
            (d) => write(d, shape),
            /^data must be an array of bytes, a Uint8Array or a string/,
          );
        }
        assertInvalid(
          board,
          (d) => write(d, new Array(12_001).fill(0)),
          /^data has 12001 bytes; at most 12000/,
        );
        // A string counts in UTF-8 bytes: 6001 "é" are 12002 bytes.
        assertInvalid(board, (d) => write(d, "é".repeat(6001)), /^data has 12002 bytes/);
      }
      // 12000 bytes is the limit, and fits.
      const { device, rec } = setup(board);
      void device.uartWrite(0, new Array(12_000).fill(255));
      assert.equal((rec.commands[0]!.args.data as number[]).length, 12_000);
    });

    test("I2C pins must match the bus per the board's table", () => {
      const table = boardPins[board].i2c;
      assertInvalid(
        board,
        (d) => d.i2cConfigure(0, 5, 4),
        /^GP5 cannot be I2C0 SDA; use one of GP0, GP4, GP8, GP12, GP16, GP20, GP28$/,
      );
      assertInvalid(
        board,
        (d) => d.i2cConfigure(0, 4, 6),
        /^GP6 cannot be I2C0 SCL; use one of GP1, GP5, GP9, GP13, GP17, GP21$/,
      );
      assertInvalid(board, (d) => d.i2cConfigure(0, 2, 3), /^GP2 cannot be I2C0 SDA/); // I2C1 pins
      assertInvalid(board, (d) => d.i2cConfigure(1, 4, 5), /^GP4 cannot be I2C1 SDA/);
      assertInvalid(board, (d) => d.i2cConfigure(1, 26, 28), /^GP28 cannot be I2C1 SCL/);
      assertInvalid(board, (d) => d.i2cConfigure(0, 23, 5), notGpio(23, "sda pin"));
      assertInvalid(board, (d) => d.i2cConfigure(0, 4, "GP5"), notGpio("GP5", "scl pin"));
      for (const frequency of [9_999, 1_000_001, 100_000.5, "100000"]) {
        assertInvalid(
          board,
          (d) => d.i2cConfigure(0, 4, 5, frequency),
          /^I2C frequency must be 10000–1000000 Hz/,
        );
      }
      // Every pin outside the table is refused; every pin inside is accepted.
      for (const bus of [0, 1] as const) {
        for (const role of ["sda", "scl"] as const) {
          const options: readonly number[] = table[bus][role];
          for (const pin of boardPins[board].gpios) {
            const [sda, scl] = role === "sda" ? [pin, table[bus].scl[0]] : [table[bus].sda[0], pin];
            if (options.includes(pin)) {
              const { device, rec } = setup(board);
              void device.i2cConfigure(bus, sda as never, scl as never);
              assert.deepEqual(rec.commands[0]!.args, { bus, sda, scl, frequency: 100_000 });
            } else {
              assertInvalid(
                board,
                (d) => d.i2cConfigure(bus, sda, scl),
                new RegExp(`^GP${pin} cannot be I2C${bus} ${role.toUpperCase()}`),
              );
            }
          }
        }
      }
    });

    test("SPI pins, frequency and mode", () => {
      assertInvalid(
        board,
        (d) => d.spiConfigure(0, { sck: 3, tx: 3, rx: 4 }),
        /^GP3 cannot be SPI0 SCK; use one of GP2, GP6, GP18, GP22$/,
      );
      assertInvalid(
        board,
        (d) => d.spiConfigure(0, { sck: 2, tx: 4, rx: 4 }),
        /^GP4 cannot be SPI0 TX; use one of GP3, GP7, GP19$/,
      );
      assertInvalid(
        board,
        (d) => d.spiConfigure(0, { sck: 2, tx: 3, rx: 3 }),
        /^GP3 cannot be SPI0 RX; use one of GP0, GP4, GP16, GP20$/,
      );
      assertInvalid(
        board,
        (d) => d.spiConfigure(1, { sck: 2, tx: 11, rx: 12 }),
        /^GP2 cannot be SPI1 SCK; use one of GP10, GP14, GP26$/,
      );
      assertInvalid(board, (d) => d.spiConfigure(1, { sck: 10, tx: 3, rx: 12 }), /^GP3 cannot be SPI1 TX/);
      assertInvalid(board, (d) => d.spiConfigure(1, { sck: 10, tx: 11, rx: 4 }), /^GP4 cannot be SPI1 RX/);
      assertInvalid(board, (d) => d.spiConfigure(0, { sck: 25, tx: 3, rx: 4 }), notGpio(25, "sck pin"));
      assertInvalid(board, (d) => d.spiConfigure(0, { sck: 2, tx: 3 }), notGpio(undefined, "rx pin"));
      assertInvalid(board, (d) => d.spiConfigure(0, undefined), notGpio(undefined, "sck pin"));
      assertInvalid(board, (d) => d.spiConfigure(0, null), notGpio(undefined, "sck pin"));
      for (const frequency of [999, 50_000_001, 1.5e6 + 0.5, "1000000"]) {
        assertInvalid(
          board,
          (d) => d.spiConfigure(0, { sck: 2, tx: 3, rx: 4 }, frequency),
          /^SPI frequency must be 1000–50000000 Hz/,
        );
      }
      for (const mode of [4, -1, 1.5, "0"]) {
        assertInvalid(
          board,
          (d) => d.spiConfigure(0, { sck: 2, tx: 3, rx: 4 }, 1_000_000, mode),
          /^SPI mode must be 0–3/,
        );
      }
    });

    test("UART pins, baud and format", () => {
      assertInvalid(
        board,
        (d) => d.uartConfigure(0, { tx: 1, rx: 1 }),
        /^GP1 cannot be UART0 TX; use one of GP0, GP12, GP16, GP28$/,
      );
      assertInvalid(
        board,
        (d) => d.uartConfigure(0, { tx: 0, rx: 0 }),
        /^GP0 cannot be UART0 RX; use one of GP1, GP13, GP17$/,
      );
      assertInvalid(
        board,
        (d) => d.uartConfigure(1, { tx: 0, rx: 5 }),
        /^GP0 cannot be UART1 TX; use one of GP4, GP8, GP20$/,
      );
      assertInvalid(
        board,
        (d) => d.uartConfigure(1, { tx: 4, rx: 1 }),
        /^GP1 cannot be UART1 RX; use one of GP5, GP9, GP21$/,
      );
      assertInvalid(board, (d) => d.uartConfigure(0, { tx: 29, rx: 1 }), notGpio(29, "tx pin"));
      assertInvalid(board, (d) => d.uartConfigure(0, {}), notGpio(undefined, "tx pin"));
      for (const baud of [115_201, 14_400, 0, -9600, 9600.5, "9600", null, 1_000_000]) {
        assertInvalid(
          board,
          (d) => d.uartConfigure(0, { tx: 0, rx: 1 }, baud),
          /^baud must be a standard rate \(300, 1200, .*, 921600; got /,
        );
      }
      for (const dataBits of [4, 9, 7.5, "8"]) {
        assertInvalid(
          board,
          (d) => d.uartConfigure(0, { tx: 0, rx: 1 }, 9600, { dataBits }),
          /^dataBits must be 5–8/,
        );
      }
      assertInvalid(
        board,
        (d) => d.uartConfigure(0, { tx: 0, rx: 1 }, 9600, { parity: "mark" }),
        /^parity must be one of none, even, odd/,
      );
      for (const stopBits of [0, 3, 1.5, "1"]) {
        assertInvalid(
          board,
          (d) => d.uartConfigure(0, { tx: 0, rx: 1 }, 9600, { stopBits }),
          /^stopBits must be 1 or 2/,
        );
      }
    });

    test("WS2812 pixels: values over 255 or the wrong shape", () => {
      const bad: unknown[] = [
        [[256, 0, 0]],
        [[0, 0, 1000]],
        [[-1, 0, 0]],
        [[1.5, 0, 0]],
        [["255", 0, 0]],
        [[1, 2]],
        [[1, 2, 3, 4]],
        [[1, 2, 3], "red"],
        [{ r: 1, g: 2, b: 3 }],
        [null],
      ];
      for (const pixels of bad) {
        assertInvalid(
          board,
          (d) => d.ws2812Write(16, pixels),
          /^pixels\[\d+\] must be \[r, g, b\] with each value 0–255 \(got /,
        );
      }
      for (const pixels of [[], "red", null, undefined, { 0: [1, 2, 3] }, new Array(1025).fill([0, 0, 0])]) {
        assertInvalid(
          board,
          (d) => d.ws2812Write(16, pixels),
          /^pixels must be an array of 1–1024 \[r, g, b\] triples$/,
        );
      }
      assertInvalid(
        board,
        (d) =>
          d.ws2812Write(16, [
            [1, 2, 3],
            [1, 2, 256],
          ]),
        /^pixels\[1\] .*\(got \[1,2,256\]\)/,
      );
    });

    test("send: a bad type, a non-object, a message of 64 KB or more", () => {
      for (const message of [null, undefined, "ping", 42, [], {}, { type: "" }, { type: 1 }]) {
        assertInvalid(
          board,
          (d) => d.send(message),
          /^a message must be an object whose type is lower_snake_case$/,
        );
      }
      for (const type of ["Ping", "ping-pong", "has space", "_x", "1abc", "x".repeat(65), "pïng"]) {
        assertInvalid(
          board,
          (d) => d.send({ type }),
          /^a message must be an object whose type is lower_snake_case$/,
        );
      }
      // {"type":"blob","data":"…"} is 25 bytes plus the data.
      assertInvalid(
        board,
        (d) => d.send({ type: "blob", data: "x".repeat(64 * 1024 - 25) }),
        /^message is 65536 bytes; a device message must be below 64 KB$/,
      );
      assertInvalid(
        board,
        (d) => d.send({ type: "blob", data: "x".repeat(100_000) }),
        /^message is 100025 bytes/,
      );
      // Size is counted in UTF-8 bytes: 33,000 "é" are 66,000 bytes.
      assertInvalid(
        board,
        (d) => d.send({ type: "blob", data: "é".repeat(33_000) }),
        /^message is 66025 bytes/,
      );
    });

    test("emitState: bad entity ids", () => {
      for (const id of ["", "a b", "temp/1", "é", "x".repeat(65), 42, null, undefined, "a\n"]) {
        assertInvalid(
          board,
          (d) => d.emitState(id, 1),
          /^entity_id must be 1–64 letters, digits, _ \. or - \(got /,
        );
      }
    });

    test("emitState: values that are not JSON-serialisable or over 8 KB", () => {
      const cyclic: Record<string, unknown> = {};
      cyclic.self = cyclic;
      for (const value of [10n, cyclic, () => 1, Symbol("x"), { big: 1n }]) {
        assertInvalid(board, (d) => d.emitState("x", value), /^a state value must be JSON-serialisable$/);
      }
      assertInvalid(
        board,
        (d) => d.emitState("x", "x".repeat(8191)),
        /^a state value must be at most 8 KB of JSON$/,
      );
      assertInvalid(board, (d) => d.emitState("x", "é".repeat(4096)), /at most 8 KB/);
      assertInvalid(board, (d) => d.emitState("x", { list: new Array(5000).fill(1) }), /at most 8 KB/);
    });
  });
}

describe("known gaps in argument checks", () => {
  test("send() with a message JSON cannot serialise throws SdkError, not TypeError", {}, () => {
    const cyclic: Record<string, unknown> = { type: "loop" };
    cyclic.self = cyclic;
    assertInvalid("pico_w", (d) => d.send({ type: "count", n: 1n }), /JSON|serialis/);
    assertInvalid("pico_w", (d) => d.send(cyclic), /JSON|serialis/);
  });

  test("a Uint8Array longer than 12000 bytes is refused like an array", {}, () => {
    assertInvalid("pico_w", (d) => d.i2cWrite(0, 0x40, new Uint8Array(12_001)), /^data has 12001 bytes/);
    assertInvalid("pico_w", (d) => d.uartWrite(0, new Uint8Array(40_000)), /^data has 40000 bytes/);
  });

  test("uartConfigure with format null throws SdkError, not TypeError", {}, () => {
    assertInvalid("pico_w", (d) => d.uartConfigure(0, { tx: 0, rx: 1 }, 9600, null), /format/);
  });

  test("a string with a lone surrogate is sent as valid UTF-8 (U+FFFD), as TextEncoder does", {}, async () => {
    const { device, rec } = setup("pico_w");
    await device.uartWrite(0, "a\uD83Db");
    assert.deepEqual(rec.commands[0]!.args.data, utf8("a\uD83Db"));
  });
});
