import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { boardPins } from "../src/index.ts";
import { assertInvalid, boardName, boardsUnderTest, setup, utf8 } from "./helpers.ts";

for (const board of boardsUnderTest) {
  describe(`Device on ${board}: invalid arguments throw SdkError synchronously and send nothing`, () => {
    const notGpio = (pin: unknown, what = "pin") =>
      new RegExp(
        `^${what} ${typeof pin === "string" ? `"${pin}"` : String(pin).replace(".", "\\.")} is not a GPIO of the ${boardName[board]} \\(`,
      );
    const badPins: unknown[] = [23, 24, 25, 29, -1, 1.5, "GP2", NaN, null, 40];

    test("a missing argument reads '<name> is required'", () => {
      assertInvalid(board, (d) => d.gpioWrite(undefined, 1), /^pin is required$/);
      assertInvalid(board, (d) => d.gpioWrite(2, undefined), /^value is required$/);
      assertInvalid(board, (d) => d.pwm(2, 1000, undefined), /^duty is required$/);
      assertInvalid(board, (d) => d.ws2812Write(16, undefined), /^pixels is required$/);
    });

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
        assertInvalid(board, (d) => d.spiTransfer(0, [1], pin), notGpio(pin, "cs"));
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
      for (const value of [2, -1, "1", null, 0.5, "true"]) {
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
      for (const duty of [-0.01, 1.01, 2, NaN, "0.5", null]) {
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
      assertInvalid(board, (d) => d.spiConfigure(0, { sck: 2, tx: 3 }), /^rx is required$/);
      assertInvalid(board, (d) => d.spiConfigure(0, undefined), /^sck is required$/);
      assertInvalid(board, (d) => d.spiConfigure(0, null), /^sck is required$/);
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
      assertInvalid(board, (d) => d.uartConfigure(0, {}), /^tx is required$/);
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
      for (const pixels of [[], "red", null, { 0: [1, 2, 3] }, new Array(1025).fill([0, 0, 0])]) {
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
      assertInvalid(
        board,
        (d) => d.emitState("x", { t: Number.POSITIVE_INFINITY }),
        /t: JSON numbers must be finite/,
      );
      assertInvalid(board, (d) => d.emitState("x", [Number.NaN]), /0: JSON numbers must be finite/);
      let deep: unknown = 1;
      for (let i = 0; i < 65; i++) deep = [deep];
      assertInvalid(board, (d) => d.emitState("x", deep), /deeper than 64 levels/);
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
