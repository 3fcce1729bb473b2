import { invalid } from "./errors.ts";
import type { AdcPin, Board, DigitalPin, Gpio } from "./pins.ts";
import * as check from "./validate.ts";

/** How the DEVICE binding reaches the server: provided by the sandbox (or a test). */
export interface DeviceBridge {
  /** Sends a command; resolves with the device's result, rejects with `SdkError`. */
  command(type: string, args: Record<string, unknown>): Promise<unknown>;
  emitState(entityId: string, valueJson: string): void;
  send(messageJson: string): void;
}

/** A 0/1 level. `true`/`false` are accepted where a level is written. */
export type Level = 0 | 1;
export type PinMode = "input" | "output";
export type Pull = "up" | "down" | "none";
export type Edge = "rising" | "falling" | "both";
export type Rgb = [red: number, green: number, blue: number];
export type ByteData = number[] | Uint8Array | string;

/** A message for the device: a JSON object with a `type`. */
export interface OutgoingMessage {
  type: string;
  [field: string]: unknown;
}

/**
 * `this.env.DEVICE`: drives the board this script instance belongs to. Every method checks its
 * arguments first and throws `SdkError` (`invalid_argument`) synchronously, before anything is sent.
 * Commands resolve with the device's answer, or reject with `SdkError` (`device_error`,
 * `device_timeout`, `device_offline`).
 */
export class Device {
  /** The board this device was registered as. */
  readonly board: Board;
  readonly #bridge: DeviceBridge;

  constructor(board: Board, bridge: DeviceBridge) {
    this.board = board;
    this.#bridge = bridge;
  }

  /** Sets a pin as input (optionally with a pull-up/down) or output. */
  pinMode(pin: DigitalPin, mode: PinMode, pull?: Pull): Promise<void> {
    const args: Record<string, unknown> = {
      pin: check.digitalPin(this.board, pin),
      mode: check.oneOf(mode, ["input", "output"], "mode"),
    };
    if (pull !== undefined) args.pull = check.oneOf(pull, ["up", "down", "none"], "pull");
    return this.#run("pin_mode", args);
  }

  /** Drives an output pin (or the onboard LED) high (1) or low (0). */
  gpioWrite(pin: DigitalPin, value: Level | boolean): Promise<void> {
    return this.#run("gpio_write", { pin: check.digitalPin(this.board, pin), value: check.bit(value) });
  }

  /** Reads a pin's level. */
  gpioRead(pin: DigitalPin): Promise<Level> {
    return this.#ask(
      "gpio_read",
      { pin: check.digitalPin(this.board, pin) },
      (r: { value: Level }) => r.value,
    );
  }

  /** Inverts an output pin (or the onboard LED); resolves with the new level. */
  gpioToggle(pin: DigitalPin): Promise<Level> {
    return this.#ask(
      "gpio_toggle",
      { pin: check.digitalPin(this.board, pin) },
      (r: { value: Level }) => r.value,
    );
  }

  /** Reports level changes of an input pin as `gpio_change` messages to `onMessage`. */
  watchPin(pin: Gpio, edge: Edge = "both", debounceMs?: number): Promise<void> {
    const args: Record<string, unknown> = {
      pin: check.gpio(this.board, pin),
      edge: check.oneOf(edge, ["rising", "falling", "both"], "edge"),
    };
    if (debounceMs !== undefined) {
      if (!check.isInteger(debounceMs, 0, 1000)) invalid(`debounceMs must be 0–1000 (got ${debounceMs})`);
      args.debounceMs = debounceMs;
    }
    return this.#run("gpio_watch", args);
  }

  /** Stops reporting changes of a pin. */
  unwatchPin(pin: Gpio): Promise<void> {
    return this.#run("gpio_unwatch", { pin: check.gpio(this.board, pin) });
  }

  /** PWM output: frequency in Hz, duty cycle from 0 (off) to 1 (always on). */
  pwm(pin: Gpio, frequency: number, duty: number): Promise<void> {
    check.pwm(frequency, duty);
    return this.#run("pwm", { pin: check.gpio(this.board, pin), frequency, duty });
  }

  /** Reads an ADC pin (GP26–GP28): volts (0–3.3) and the raw 12-bit sample. */
  adcRead(pin: AdcPin): Promise<{ volts: number; raw: number }> {
    return this.#ask(
      "adc_read",
      { pin: check.adcPin(this.board, pin) },
      (r: { volts: number; raw: number }) => r,
    );
  }

  /** The chip's internal temperature sensor, in °C. */
  readTemperature(): Promise<number> {
    return this.#ask("temperature_read", {}, (r: { celsius: number }) => r.celsius);
  }

  /** Sets an I2C bus's pins and clock (10 kHz–1 MHz). Default pins: I2C0 on GP4/GP5. */
  i2cConfigure(bus: 0 | 1, sda: Gpio, scl: Gpio, frequency = 100_000): Promise<void> {
    const b = check.bus(bus);
    if (!check.isInteger(frequency, 10_000, 1_000_000))
      invalid(`I2C frequency must be 10000–1000000 Hz (got ${frequency})`);
    return this.#run("i2c_configure", {
      bus: b,
      sda: check.busPin(this.board, "i2c", b, "sda", sda),
      scl: check.busPin(this.board, "i2c", b, "scl", scl),
      frequency,
    });
  }

  /** Writes bytes to an I2C device (address 0x08–0x77). */
  i2cWrite(bus: 0 | 1, address: number, data: ByteData): Promise<void> {
    return this.#run("i2c_write", {
      bus: check.bus(bus),
      address: check.i2cAddress(address),
      data: check.bytes(data),
    });
  }

  /** Reads `length` bytes from an I2C device, optionally from a register. */
  i2cRead(bus: 0 | 1, address: number, length: number, register?: number): Promise<number[]> {
    if (!check.isInteger(length, 1, 4096)) invalid(`length must be 1–4096 (got ${length})`);
    const args: Record<string, unknown> = { bus: check.bus(bus), address: check.i2cAddress(address), length };
    if (register !== undefined) {
      if (!check.isInteger(register, 0, 255)) invalid(`register must be a byte 0–255 (got ${register})`);
      args.register = register;
    }
    return this.#ask("i2c_read", args, (r: { data: number[] }) => r.data);
  }

  /** Addresses that answer on an I2C bus. */
  i2cScan(bus: 0 | 1): Promise<number[]> {
    return this.#ask("i2c_scan", { bus: check.bus(bus) }, (r: { addresses: number[] }) => r.addresses);
  }

  /** Sets an SPI bus's pins, clock (1 kHz–50 MHz) and mode (0–3). */
  spiConfigure(
    bus: 0 | 1,
    pins: { sck: Gpio; tx: Gpio; rx: Gpio },
    frequency = 1_000_000,
    mode: 0 | 1 | 2 | 3 = 0,
  ): Promise<void> {
    const b = check.bus(bus);
    if (!check.isInteger(frequency, 1_000, 50_000_000))
      invalid(`SPI frequency must be 1000–50000000 Hz (got ${frequency})`);
    if (!check.isInteger(mode, 0, 3)) invalid(`SPI mode must be 0–3 (got ${mode})`);
    return this.#run("spi_configure", {
      bus: b,
      sck: check.busPin(this.board, "spi", b, "sck", pins?.sck),
      tx: check.busPin(this.board, "spi", b, "tx", pins?.tx),
      rx: check.busPin(this.board, "spi", b, "rx", pins?.rx),
      frequency,
      mode,
    });
  }

  /** Sends bytes and returns the bytes clocked in at the same time. */
  spiTransfer(bus: 0 | 1, data: ByteData, cs?: Gpio): Promise<number[]> {
    const args: Record<string, unknown> = { bus: check.bus(bus), data: check.bytes(data) };
    if (cs !== undefined) args.cs = check.gpio(this.board, cs, "cs");
    return this.#ask("spi_transfer", args, (r: { data: number[] }) => r.data);
  }

  /** Sets a UART's pins and format. Received bytes arrive as `uart_rx` messages in `onMessage`. */
  uartConfigure(
    uart: 0 | 1,
    pins: { tx: Gpio; rx: Gpio },
    baud = 115_200,
    options: { dataBits?: 5 | 6 | 7 | 8; parity?: "none" | "even" | "odd"; stopBits?: 1 | 2 } = {},
  ): Promise<void> {
    if (typeof options !== "object" || options === null)
      invalid('format must be an object like { dataBits: 8, parity: "none", stopBits: 1 }');
    const format = options;
    const u = check.bus(uart, "uart");
    const args: Record<string, unknown> = {
      uart: u,
      tx: check.busPin(this.board, "uart", u, "tx", pins?.tx),
      rx: check.busPin(this.board, "uart", u, "rx", pins?.rx),
      baud: check.baud(baud),
    };
    if (format.dataBits !== undefined) {
      if (!check.isInteger(format.dataBits, 5, 8)) invalid(`dataBits must be 5–8 (got ${format.dataBits})`);
      args.dataBits = format.dataBits;
    }
    if (format.parity !== undefined)
      args.parity = check.oneOf(format.parity, ["none", "even", "odd"], "parity");
    if (format.stopBits !== undefined) {
      if (format.stopBits !== 1 && format.stopBits !== 2)
        invalid(`stopBits must be 1 or 2 (got ${format.stopBits})`);
      args.stopBits = format.stopBits;
    }
    return this.#run("uart_configure", args);
  }

  /** Writes bytes (or a UTF-8 string) to a UART. */
  uartWrite(uart: 0 | 1, data: ByteData): Promise<void> {
    return this.#run("uart_write", { uart: check.bus(uart, "uart"), data: check.bytes(data) });
  }

  /** Sets a WS2812 (NeoPixel) strip: one [r, g, b] triple (0–255 each) per pixel. */
  ws2812Write(pin: Gpio, pixels: Rgb[]): Promise<void> {
    return this.#run("ws2812_write", { pin: check.gpio(this.board, pin), pixels: check.pixels(pixels) });
  }

  /** Sends a raw typed message to the device (for custom firmware). Nothing waits for an answer. */
  send(message: OutgoingMessage): void {
    if (
      typeof message !== "object" ||
      message === null ||
      typeof message.type !== "string" ||
      !/^[a-z][a-z0-9_]{0,63}$/.test(message.type)
    ) {
      invalid("a message must be an object whose type is lower_snake_case");
    }
    let json: string;
    try {
      json = JSON.stringify(message);
    } catch (error) {
      invalid(`the message must be JSON-serialisable (${(error as Error).message})`);
    }
    check.messageSize(json);
    this.#bridge.send(json);
  }

  /** Publishes a state value (a number, string, boolean or small JSON object) for an entity. */
  emitState(entityId: string, value: unknown): void {
    const id = check.entityId(entityId);
    this.#bridge.emitState(id, check.stateValue(value));
  }

  // Not async: argument checks must throw synchronously, before a promise exists.
  #run(type: string, args: Record<string, unknown>): Promise<void> {
    return this.#ask(type, args, () => undefined);
  }

  #ask<R, T>(type: string, args: Record<string, unknown>, pick: (result: R) => T): Promise<T> {
    check.messageSize(JSON.stringify(args), type);
    return this.#bridge.command(type, args).then((result) => pick(result as R));
  }
}
