// checkCommand is the one rule book for command arguments: the device library, the simulator and
// the server ask it, and the firmware's C header is generated from the same tables. These tests pin
// its answers per board, and check that the zod schemas never refuse what it accepts.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  type ArgSpec,
  allGpios,
  type Board,
  boardIds,
  boards,
  type CommandType,
  checkCommand,
  commandArgs,
  commandSchemas,
  commandTypes,
  isCommandType,
  isCustomMessageType,
  ledCommands,
  maxBytesPerMessage,
  onboardLed,
  reservedMessageTypes,
  uartBauds,
} from "../src/index.ts";

type Args = Record<string, unknown>;

/** A valid set of arguments for every command on this board. */
function validArgs(board: Board): Record<CommandType, Args> {
  const b = boards[board];
  return {
    pin_mode: { pin: 2, mode: "output", pull: "none" },
    gpio_write: { pin: 2, value: 1 },
    gpio_read: { pin: 2 },
    gpio_toggle: { pin: onboardLed },
    gpio_watch: { pin: 14, edge: "both", debounceMs: 20 },
    gpio_unwatch: { pin: 14 },
    pwm: { pin: 16, frequency: 1000, duty: 0.5 },
    adc_read: { pin: b.adcPins[0] },
    temperature_read: {},
    i2c_configure: { bus: 1, sda: b.i2c[1].sda[0], scl: b.i2c[1].scl[0], frequency: 400_000 },
    i2c_write: { bus: 0, address: 0x3c, data: [0, 1, 255] },
    i2c_read: { bus: 0, address: 0x48, length: 2, register: 0 },
    i2c_scan: { bus: 1 },
    spi_configure: {
      bus: 0,
      sck: b.spi[0].sck[0],
      tx: b.spi[0].tx[0],
      rx: b.spi[0].rx[0],
      frequency: 1e6,
      mode: 3,
    },
    spi_transfer: { bus: 0, data: [1, 2], cs: 17 },
    uart_configure: {
      uart: 1,
      tx: b.uart[1].tx[0],
      rx: b.uart[1].rx[0],
      baud: 115_200,
      dataBits: 8,
      parity: "even",
      stopBits: 2,
    },
    uart_write: { uart: 0, data: [] },
    ws2812_write: { pin: 22, pixels: [[255, 0, 0]] },
  };
}

const gpioSpecs = (type: CommandType) =>
  commandArgs[type].filter((s) => s.kind === "gpio" || s.kind === "digitalPin");

for (const board of boardIds) {
  const info = boards[board];
  const gpios: readonly number[] = info.gpios;
  const valid = validArgs(board);
  const ok = (type: CommandType, args: Args) =>
    assert.equal(checkCommand(board, type, args), null, `${type} ${JSON.stringify(args)}`);
  const refused = (type: CommandType, args: Args, message?: RegExp) => {
    const problem = checkCommand(board, type, args);
    assert.equal(typeof problem, "string", `${type} ${JSON.stringify(args)} was accepted`);
    if (message) assert.match(problem!, message);
    return problem!;
  };

  describe(`checkCommand on ${board}`, () => {
    test("every command has a valid example, and the schema accepts it too", () => {
      assert.deepEqual(Object.keys(valid).sort(), [...commandTypes].sort());
      for (const type of commandTypes) {
        ok(type, valid[type]);
        assert.ok(commandSchemas[type].safeParse(valid[type]).success, type);
      }
    });

    test("the header GPIOs are usable; the wireless chip's 23–25 and 29 are not", () => {
      assert.deepEqual([...gpios], [...range(0, 22), 26, 27, 28]);
      for (const pin of gpios) ok("gpio_read", { pin });
      for (const pin of [23, 24, 25, 29, 30, 40, -1, 1.5, "GP2", "2", null, Number.NaN, true]) {
        const message = refused("gpio_read", { pin });
        assert.match(
          message,
          new RegExp(`^pin .* is not a GPIO of the ${info.name} \\(GPIO numbers 0–22 and 26–28`),
        );
      }
    });

    test("every pin argument of every command refuses a pin the board lacks", () => {
      for (const type of commandTypes) {
        for (const spec of gpioSpecs(type)) {
          for (const pin of [23, 24, 25, 29]) {
            refused(type, { ...valid[type], [spec.name]: pin }, /is not a GPIO of the/);
          }
        }
      }
    });

    test("the onboard LED is a plain digital pin: only pin_mode, gpio_write, gpio_read, gpio_toggle", () => {
      for (const type of commandTypes) {
        for (const spec of commandArgs[type]) {
          if (!["gpio", "digitalPin", "adcPin", "busPin"].includes(spec.kind)) continue;
          const args = { ...valid[type], [spec.name]: onboardLed };
          if ((ledCommands as readonly string[]).includes(type)) ok(type, args);
          else refused(type, args);
        }
      }
      for (const lower of ["led", "Led", "LED "]) refused("gpio_write", { pin: lower, value: 1 });
    });

    test("ADC reads only on the board's ADC pins", () => {
      for (const pin of gpios) {
        if ((info.adcPins as readonly number[]).includes(pin)) ok("adc_read", { pin });
        else refused("adc_read", { pin }, /cannot read analog values: the ADC pins are GP26, GP27 and GP28/);
      }
      for (const pin of [25, 29, "GP26", 26.5]) refused("adc_read", { pin });
    });

    test("bus pins: every GPIO is accepted exactly where the board's table lists it for that role", () => {
      const cases: [CommandType, "i2c" | "spi" | "uart", string][] = [
        ["i2c_configure", "i2c", "bus"],
        ["spi_configure", "spi", "bus"],
        ["uart_configure", "uart", "uart"],
      ];
      for (const [type, peripheral, busArg] of cases) {
        for (const bus of [0, 1] as const) {
          const table = info[peripheral][bus] as Record<string, readonly number[]>;
          const base: Args = { ...valid[type], [busArg]: bus };
          for (const role of Object.keys(table)) base[role] = table[role]![0];
          ok(type, base);
          for (const [role, options] of Object.entries(table)) {
            for (const pin of gpios) {
              const args = { ...base, [role]: pin };
              if (options.includes(pin)) ok(type, args);
              else {
                const name = `${peripheral.toUpperCase()}${bus} ${role.toUpperCase()}`;
                const message = refused(type, args, new RegExp(`^GP${pin} cannot be ${name}; use one of `));
                assert.ok(message.endsWith(options.map((p) => `GP${p}`).join(", ")), message);
              }
            }
            refused(type, { ...base, [role]: 23 }, new RegExp(`^${role} pin 23 is not a GPIO`));
          }
        }
      }
    });

    test("the documented pin options of each bus (RP2040/RP2350 function select)", () => {
      assert.deepEqual(info.i2c[0], { sda: [0, 4, 8, 12, 16, 20, 28], scl: [1, 5, 9, 13, 17, 21] });
      assert.deepEqual(info.spi[1], { sck: [10, 14, 26], tx: [11, 15, 27], rx: [8, 12, 28] });
      assert.deepEqual(info.uart[0], { tx: [0, 12, 16, 28], rx: [1, 13, 17] });
      refused("i2c_configure", { bus: 0, sda: 2, scl: 3, frequency: 100_000 }, /^GP2 cannot be I2C0 SDA/);
      refused("spi_configure", { bus: 1, sck: 2, tx: 3, rx: 4, frequency: 1e6 }, /^GP2 cannot be SPI1 SCK/);
      refused("uart_configure", { uart: 0, tx: 4, rx: 5, baud: 9600 }, /^GP4 cannot be UART0 TX/);
    });

    test("buses are 0 or 1", () => {
      for (const bus of [2, -1, "0", 0.5, null, true]) {
        refused("i2c_scan", { bus }, /^bus must be 0 or 1 \(got /);
        refused("uart_write", { uart: bus, data: [] }, /^uart must be 0 or 1 \(got /);
      }
    });

    test("every range is inclusive at both ends and refuses one step outside", () => {
      for (const type of commandTypes) {
        for (const spec of commandArgs[type]) {
          if (spec.kind !== "integer" && spec.kind !== "number") continue;
          const at = (value: unknown) => ({ ...valid[type], [spec.name]: value });
          const step = spec.kind === "integer" ? 1 : 0.001;
          ok(type, at(spec.range.min));
          ok(type, at(spec.range.max));
          refused(
            type,
            at(spec.range.min - step),
            new RegExp(`must be.* ${spec.range.min}–${spec.range.max}`),
          );
          refused(type, at(spec.range.max + step));
          refused(type, at(String(spec.range.min)));
          refused(type, at(Number.NaN));
          if (spec.kind === "integer" && spec.range.max > spec.range.min)
            refused(type, at(spec.range.min + 0.5));
        }
      }
      refused("pwm", { pin: 2, frequency: 7, duty: 0.5 }, /^frequency must be 8–1000000 Hz \(got 7\)$/);
      refused("pwm", { pin: 2, frequency: 1000, duty: 1.01 }, /^duty must be 0–1 \(got 1\.01\)$/);
      refused("gpio_watch", { pin: 2, edge: "both", debounceMs: 1001 }, /^debounceMs must be 0–1000/);
      refused(
        "i2c_configure",
        { ...valid.i2c_configure, frequency: 9_999 },
        /^I2C frequency must be 10000–1000000 Hz/,
      );
      refused(
        "spi_configure",
        { ...valid.spi_configure, frequency: 999 },
        /^SPI frequency must be 1000–50000000 Hz/,
      );
      refused("spi_configure", { ...valid.spi_configure, mode: 4 }, /^SPI mode must be 0–3/);
      refused("i2c_read", { ...valid.i2c_read, length: 4097 }, /^length must be 1–4096/);
      refused("i2c_read", { ...valid.i2c_read, register: 256 }, /^register must be a byte 0–255/);
      refused("uart_configure", { ...valid.uart_configure, dataBits: 9 }, /^dataBits must be 5–8/);
    });

    test("I2C addresses are 0x08–0x77, shown in hex", () => {
      ok("i2c_write", { bus: 0, address: 0x08, data: [] });
      ok("i2c_write", { bus: 0, address: 0x77, data: [] });
      refused(
        "i2c_write",
        { bus: 0, address: 0x07, data: [] },
        /^I2C address must be 0x08–0x77 \(got 0x7\)$/,
      );
      refused("i2c_read", { bus: 0, address: 0x78, length: 1 }, /\(got 0x78\)$/);
      refused("i2c_read", { bus: 0, address: "0x40", length: 1 }, /\(got "0x40"\)$/);
    });

    test("UART: the standard baud rates, parity and stop bits", () => {
      for (const baud of uartBauds) ok("uart_configure", { ...valid.uart_configure, baud });
      for (const baud of [0, 14_400, 115_201, 1_000_000, "9600"]) {
        refused(
          "uart_configure",
          { ...valid.uart_configure, baud },
          /^baud must be a standard rate \(300, 1200/,
        );
      }
      refused(
        "uart_configure",
        { ...valid.uart_configure, parity: "mark" },
        /^parity must be one of none, even, odd/,
      );
      refused(
        "uart_configure",
        { ...valid.uart_configure, stopBits: 1.5 },
        /^stopBits must be 1 or 2 \(got 1\.5\)$/,
      );
    });

    test("modes, pulls and edges are from their lists", () => {
      refused("pin_mode", { pin: 2, mode: "analog" }, /^mode must be one of input, output \(got "analog"\)$/);
      refused("pin_mode", { pin: 2, mode: "input", pull: "sideways" }, /^pull must be one of up, down, none/);
      refused("gpio_watch", { pin: 2, edge: "up" }, /^edge must be one of rising, falling, both/);
      refused("gpio_write", { pin: 2, value: true }, /^value must be 0 or 1 \(got true\)$/);
    });

    test("byte data: at most maxBytesPerMessage bytes of 0–255", () => {
      ok("uart_write", { uart: 0, data: new Array(maxBytesPerMessage).fill(255) });
      refused(
        "uart_write",
        { uart: 0, data: new Array(maxBytesPerMessage + 1).fill(0) },
        /^data has 12001 bytes; at most 12000/,
      );
      refused("spi_transfer", { bus: 0, data: [1, 256] }, /^data\[1\] must be a byte 0–255 \(got 256\)$/);
      refused("i2c_write", { bus: 0, address: 0x40, data: [1.5] }, /^data\[0\] must be a byte/);
      refused("i2c_write", { bus: 0, address: 0x40, data: "abc" }, /^data must be an array of bytes$/);
    });

    test("WS2812 pixels: 1–1024 triples of bytes", () => {
      ok("ws2812_write", { pin: 2, pixels: new Array(1024).fill([0, 0, 0]) });
      for (const pixels of [[], new Array(1025).fill([0, 0, 0]), "red", null]) {
        refused(
          "ws2812_write",
          { pin: 2, pixels },
          /^pixels must be an array of 1–1024 \[r, g, b\] triples$/,
        );
      }
      for (const pixel of [[256, 0, 0], [1, 2], [1, 2, 3, 4], ["1", 2, 3], null]) {
        refused("ws2812_write", { pin: 2, pixels: [[0, 0, 0], pixel] }, /^pixels\[1\] must be \[r, g, b\]/);
      }
    });

    test("optional arguments may be left out but not null; unknown arguments are ignored", () => {
      for (const type of commandTypes) {
        const required = Object.fromEntries(
          Object.entries(valid[type]).filter(([k]) => !commandArgs[type].find((s) => s.name === k)?.optional),
        );
        ok(type, required);
        ok(type, { ...valid[type], extra: "ignored" });
        for (const spec of commandArgs[type]) {
          if (spec.optional) refused(type, { ...valid[type], [spec.name]: null });
          else refused(type, omit(valid[type], spec.name));
        }
      }
    });

    test("checks run in argument order: the first bad argument is reported", () => {
      const message = refused("i2c_configure", { bus: 0, sda: 23, scl: 99, frequency: 1 });
      assert.match(message, /^sda pin 23/);
      assert.match(refused("pwm", { pin: 25, frequency: 1, duty: 2 }), /^pin 25/);
    });
  });
}

describe("checkCommand's other answers", () => {
  test("an unknown command, an unknown board, arguments that are not an object", () => {
    assert.match(
      checkCommand("pico_w", "gpio_explode", {})!,
      /^unknown command "gpio_explode"; commands: pin_mode, /,
    );
    assert.match(checkCommand("pico_x" as Board, "gpio_read", { pin: 2 })!, /^unknown board "pico_x"/);
    assert.match(checkCommand("pico_w" as Board, "toString", {})!, /^unknown command/);
    for (const args of [null, [], "pin", 2]) {
      assert.match(
        checkCommand("pico_w", "gpio_read", args)!,
        /^gpio_read: the arguments must be an object$/,
      );
    }
  });

  test("it never throws, whatever it is given", () => {
    const junk: unknown[] = [undefined, null, 0, "", {}, [], { pin: {} }, { bus: { valueOf: () => 0 } }];
    for (const board of [...boardIds, "x"] as Board[]) {
      for (const type of [...commandTypes, "", "__proto__"]) {
        for (const args of junk) assert.doesNotThrow(() => checkCommand(board, type, args));
      }
    }
  });

  test("the schemas accept whatever checkCommand accepts, on every board (they know no board)", () => {
    const samples: [CommandType, Args][] = [];
    for (const board of boardIds) {
      const valid = validArgs(board);
      for (const type of commandTypes) {
        samples.push([type, valid[type]]);
        for (const spec of commandArgs[type]) samples.push(...variants(type, valid[type], spec));
      }
    }
    let accepted = 0;
    for (const [type, args] of samples) {
      const byBoard = boardIds.map((board) => checkCommand(board, type, args) === null);
      const bySchema = commandSchemas[type].safeParse(args).success;
      if (byBoard.some(Boolean)) {
        accepted++;
        assert.ok(bySchema, `${type} ${JSON.stringify(args)}: the schema refuses what a board accepts`);
      }
      // Outside the pin-role tables the schema is as strict as the boards taken together.
      if (!commandArgs[type].some((s) => s.kind === "busPin" || s.kind === "adcPin")) {
        assert.equal(bySchema, byBoard.some(Boolean), `${type} ${JSON.stringify(args)}`);
      }
    }
    assert.ok(accepted > 100, `only ${accepted} accepted samples`);
  });

  test("allGpios is the union of the boards' GPIOs", () => {
    assert.deepEqual(
      [...allGpios],
      [...new Set(boardIds.flatMap((b) => boards[b].gpios))].sort((a, b) => a - b),
    );
  });
});

function range(from: number, to: number): number[] {
  return Array.from({ length: to - from + 1 }, (_, i) => from + i);
}

function omit(args: Args, key: string): Args {
  const { [key]: _, ...rest } = args;
  return rest;
}

/** Values around the edges of one argument's rule. */
function variants(type: CommandType, args: Args, spec: ArgSpec): [CommandType, Args][] {
  const values: unknown[] = [undefined, null, "1", -1, 0.5, Number.NaN];
  switch (spec.kind) {
    case "gpio":
    case "digitalPin":
    case "adcPin":
    case "busPin":
      values.push(...range(0, 30), onboardLed);
      break;
    case "integer":
    case "number":
      values.push(
        spec.range.min,
        spec.range.max,
        spec.range.min - 1,
        spec.range.max + 1,
        spec.range.min + 0.5,
      );
      break;
    case "oneOf":
      values.push(...spec.options, "other");
      break;
    case "bus":
    case "level":
      values.push(0, 1, 2, true);
      break;
    case "i2cAddress":
      values.push(0x07, 0x08, 0x77, 0x78);
      break;
    case "baud":
      values.push(...uartBauds, 14_400);
      break;
    case "bytes":
      values.push([], [0, 255], [256], new Array(maxBytesPerMessage + 1).fill(0));
      break;
    case "pixels":
      values.push([[1, 2, 3]], [], [[1, 2]]);
      break;
  }
  return values.map((value) => [
    type,
    value === undefined ? omit(args, spec.name) : { ...args, [spec.name]: value },
  ]);
}

describe("message types a device may send", () => {
  test("custom events are lower_snake_case types the protocol does not define", () => {
    for (const type of ["button_pressed", "x", "a".repeat(64), "reading_2"])
      assert.ok(isCustomMessageType(type), type);
    for (const type of [...commandTypes, "welcome", "hello", "state", "log", "gpio_change"]) {
      assert.ok(!isCustomMessageType(type), `${type} is the protocol's own`);
    }
    for (const type of ["Ping", "ping-pong", "_x", "1abc", "a".repeat(65), "", "pïng"]) {
      assert.ok(!isCustomMessageType(type), JSON.stringify(type));
    }
    assert.deepEqual([...reservedMessageTypes], [...commandTypes, "welcome"]);
    assert.ok(isCommandType("pwm") && !isCommandType("welcome") && !isCommandType("hasOwnProperty"));
  });
});

test("checkCommand: every required argument, left out or undefined, reads '<name> is required'", () => {
  for (const board of boardIds) {
    const valid = validArgs(board);
    for (const type of commandTypes) {
      for (const spec of commandArgs[type]) {
        if (spec.optional) continue;
        const { [spec.name]: _left, ...rest } = valid[type];
        assert.equal(checkCommand(board, type, rest), `${spec.name} is required`, `${board} ${type}`);
        const undef = { ...rest, [spec.name]: undefined };
        assert.equal(checkCommand(board, type, undef), `${spec.name} is required`, `${board} ${type}`);
      }
    }
  }
});
