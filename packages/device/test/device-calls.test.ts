import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Device, type DeviceBridge, GP0, GP4, GP5, GP26, GP28, OnboardLED, SdkError } from "../src/index.ts";
import { boardsUnderTest, setup, utf8 } from "./helpers.ts";

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
}
