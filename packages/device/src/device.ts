import type {
  AdcPin,
  Board,
  BusId,
  CommandType,
  Edge,
  Gpio,
  Parity,
  PinLevel,
  PinMode,
  Pull,
} from "@sdk/protocol/hardware";
import { invalid } from "./errors.ts";
import type { DigitalPin } from "./pins.ts";
import * as check from "./validate.ts";

/** How the DEVICE binding reaches the server: provided by the sandbox (or a test). */
export interface DeviceBridge {
  /** Sends a command; resolves with the device's result, rejects with `SdkError`. */
  command(type: string, args: Record<string, unknown>): Promise<unknown>;
  emitState(entityId: string, valueJson: string): void;
  send(messageJson: string): void;
}

export type { Edge, PinLevel, PinMode, Pull };
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
    return this.#run("pin_mode", pull === undefined ? { pin, mode } : { pin, mode, pull });
  }

  /** Drives an output pin (or the onboard LED) high (1) or low (0). */
  gpioWrite(pin: DigitalPin, value: PinLevel | boolean): Promise<void> {
    this.#check("gpio_read", { pin });
    return this.#run("gpio_write", { pin, value: check.level(value) });
  }

  /** Reads a pin's level. */
  gpioRead(pin: DigitalPin): Promise<PinLevel> {
    return this.#ask("gpio_read", { pin }, (r: { value: PinLevel }) => r.value);
  }

  /** Inverts an output pin (or the onboard LED); resolves with the new level. */
  gpioToggle(pin: DigitalPin): Promise<PinLevel> {
    return this.#ask("gpio_toggle", { pin }, (r: { value: PinLevel }) => r.value);
  }

  /** Reports level changes of an input pin as `gpio_change` messages to `onMessage`. */
  watchPin(pin: Gpio, edge: Edge = "both", debounceMs?: number): Promise<void> {
    return this.#run("gpio_watch", debounceMs === undefined ? { pin, edge } : { pin, edge, debounceMs });
  }

  /** Stops reporting changes of a pin. */
  unwatchPin(pin: Gpio): Promise<void> {
    return this.#run("gpio_unwatch", { pin });
  }

  /** PWM output: frequency in Hz, duty cycle from 0 (off) to 1 (always on). */
  pwm(pin: Gpio, frequency: number, duty: number): Promise<void> {
    return this.#run("pwm", { pin, frequency, duty });
  }

  /** Reads an ADC pin (GP26–GP28): volts (0–3.3) and the raw 12-bit sample. */
  adcRead(pin: AdcPin): Promise<{ volts: number; raw: number }> {
    return this.#ask("adc_read", { pin }, (r: { volts: number; raw: number }) => r);
  }

  /** The chip's internal temperature sensor, in °C. */
  readTemperature(): Promise<number> {
    return this.#ask("temperature_read", {}, (r: { celsius: number }) => r.celsius);
  }

  /** Sets an I2C bus's pins and clock (10 kHz–1 MHz). Default pins: I2C0 on GP4/GP5. */
  i2cConfigure(bus: BusId, sda: Gpio, scl: Gpio, frequency = 100_000): Promise<void> {
    return this.#run("i2c_configure", { bus, sda, scl, frequency });
  }

  /** Writes bytes to an I2C device (address 0x08–0x77). */
  i2cWrite(bus: BusId, address: number, data: ByteData): Promise<void> {
    this.#check("i2c_scan", { bus });
    return this.#run("i2c_write", { bus, address, data: check.bytes(data) });
  }

  /** Reads `length` bytes from an I2C device, optionally from a register. */
  i2cRead(bus: BusId, address: number, length: number, register?: number): Promise<number[]> {
    const args = register === undefined ? { bus, address, length } : { bus, address, length, register };
    return this.#ask("i2c_read", args, (r: { data: number[] }) => r.data);
  }

  /** Addresses that answer on an I2C bus. */
  i2cScan(bus: BusId): Promise<number[]> {
    return this.#ask("i2c_scan", { bus }, (r: { addresses: number[] }) => r.addresses);
  }

  /** Sets an SPI bus's pins, clock (1 kHz–50 MHz) and mode (0–3). */
  spiConfigure(
    bus: BusId,
    pins: { sck: Gpio; tx: Gpio; rx: Gpio },
    frequency = 1_000_000,
    mode: 0 | 1 | 2 | 3 = 0,
  ): Promise<void> {
    return this.#run("spi_configure", { bus, sck: pins?.sck, tx: pins?.tx, rx: pins?.rx, frequency, mode });
  }

  /** Sends bytes and returns the bytes clocked in at the same time. */
  spiTransfer(bus: BusId, data: ByteData, cs?: Gpio): Promise<number[]> {
    this.#check("i2c_scan", { bus });
    const bytes = check.bytes(data);
    const args = cs === undefined ? { bus, data: bytes } : { bus, data: bytes, cs };
    return this.#ask("spi_transfer", args, (r: { data: number[] }) => r.data);
  }

  /** Sets a UART's pins and format. Received bytes arrive as `uart_rx` messages in `onMessage`. */
  uartConfigure(
    uart: BusId,
    pins: { tx: Gpio; rx: Gpio },
    baud = 115_200,
    options: { dataBits?: 5 | 6 | 7 | 8; parity?: Parity; stopBits?: 1 | 2 } = {},
  ): Promise<void> {
    if (typeof options !== "object" || options === null)
      invalid('format must be an object like { dataBits: 8, parity: "none", stopBits: 1 }');
    const args: Record<string, unknown> = { uart, tx: pins?.tx, rx: pins?.rx, baud };
    for (const key of ["dataBits", "parity", "stopBits"] as const) {
      if (options[key] !== undefined) args[key] = options[key];
    }
    return this.#run("uart_configure", args);
  }

  /** Writes bytes (or a UTF-8 string) to a UART. */
  uartWrite(uart: BusId, data: ByteData): Promise<void> {
    this.#check("uart_write", { uart, data: [] });
    return this.#run("uart_write", { uart, data: check.bytes(data) });
  }

  /** Sets a WS2812 (NeoPixel) strip: one [r, g, b] triple (0–255 each) per pixel. */
  ws2812Write(pin: Gpio, pixels: Rgb[]): Promise<void> {
    return this.#run("ws2812_write", { pin, pixels });
  }

  /** Sends a raw typed message to the device (for custom firmware). Nothing waits for an answer. */
  send(message: OutgoingMessage): void {
    check.messageType(message);
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
  // Methods that convert an argument (levels, byte data) first check the arguments before it
  // through a command that has only those, so the first bad argument is the one reported.
  #check(type: CommandType, args: Record<string, unknown>): void {
    check.command(this.board, type, args);
  }

  #run(type: CommandType, args: Record<string, unknown>): Promise<void> {
    return this.#ask(type, args, () => undefined);
  }

  #ask<R, T>(type: CommandType, args: Record<string, unknown>, pick: (result: R) => T): Promise<T> {
    this.#check(type, args);
    check.messageSize(JSON.stringify(args), type);
    return this.#bridge.command(type, args).then((result) => pick(result as R));
  }
}
