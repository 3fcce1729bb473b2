import type { Board, CommandArgs, CommandType, LogLevel, Welcome } from "@sdk/protocol";
import { assertGpio } from "./board.ts";
import { Emitter } from "./emitter.ts";
import type { Level, PinId, PinState, Transition } from "./hardware/gpio.ts";
import type { I2cBus } from "./hardware/i2c.ts";
import { Eeprom, Tmp102 } from "./hardware/i2c-devices.ts";
import { Hardware } from "./hardware/index.ts";
import type { SpiBus } from "./hardware/spi.ts";
import type { Uart } from "./hardware/uart.ts";
import type { Rgb } from "./hardware/ws2812.ts";
import { eventMessage, logMessage, parseSent, stateMessage } from "./outgoing.ts";
import { checkOptions, DeviceSession } from "./session.ts";
import { defaultHoldMs } from "./simulator-commands.ts";
import type { CommandRecord, DeviceEvents, LinkState, SimulatedDeviceOptions } from "./types.ts";
import { defaultWaitMs, waitForCondition, waitForEvent } from "./wait.ts";

export { simulatorVersion } from "./version.ts";

/** Replaces what a command does: see SimulatedDevice.handle. */
export type CommandOverride<T extends CommandType> = (
  args: CommandArgs<T>,
  device: SimulatedDevice,
) => unknown | Promise<unknown>;

/**
 * A virtual Raspberry Pi Pico W / Pico 2 W: connects to the server's device socket, answers
 * commands from virtual hardware, and sends events. Its hardware state is readable and drivable
 * from tests.
 */
export class SimulatedDevice extends Emitter<DeviceEvents> {
  readonly deviceId: string;
  readonly board: Board;
  readonly firmware: string;
  readonly url: string;
  readonly hardware: Hardware;
  readonly #session: DeviceSession;

  constructor(options: SimulatedDeviceOptions) {
    super();
    checkOptions(options);
    this.deviceId = options.deviceId;
    const now = options.now ?? Date.now;
    const historyLimit = options.historyLimit ?? 10_000;
    this.hardware = new Hardware(options.board ?? "pico_w", {
      now,
      historyLimit,
      send: (event) => this.#session.hardwareEvent(event),
    });
    this.#session = new DeviceSession({
      options,
      hardware: this.hardware,
      now,
      historyLimit,
      emit: (event, payload) => this.emit(event, payload),
    });
    this.board = this.#session.board;
    this.firmware = this.#session.firmware;
    this.url = this.#session.url;
  }

  // ------------------------------------------------------------ lifecycle

  get status(): LinkState {
    return this.#session.status;
  }

  /** True between welcome and the end of that connection. */
  get connected(): boolean {
    return this.#session.status === "connected";
  }

  /** The welcome of the current connection. */
  get welcome(): Welcome | null {
    return this.#session.welcome;
  }

  /** Connects, and keeps reconnecting until stop() or kill(). */
  start(): this {
    this.#session.connection.start();
    return this;
  }

  /** Closes cleanly (close code 1000) and stops reconnecting. */
  stop(): Promise<void> {
    return this.#session.connection.stop(1000, "device stopped");
  }

  /**
   * Destroys the TCP socket without a close frame, like a power cut. It stays down unless
   * `reconnect` is true (a network drop).
   */
  kill(options: { reconnect?: boolean } = {}): void {
    this.#session.connection.kill(options.reconnect ?? false);
  }

  /** Hangs (true) or resumes: a frozen device keeps its socket but answers no pings or frames. */
  freeze(frozen = true): void {
    this.#session.connection.freeze(frozen);
  }

  /** Resolves with the next `event` (passing `filter`); rejects after `timeoutMs` (default 15 s). */
  waitFor<E extends keyof DeviceEvents>(event: E, timeoutMs?: number): Promise<DeviceEvents[E]>;
  waitFor<E extends keyof DeviceEvents>(
    event: E,
    filter: (payload: DeviceEvents[E]) => boolean,
    timeoutMs?: number,
  ): Promise<DeviceEvents[E]>;
  /** Resolves once `condition()` holds (checked now and after every event). */
  waitFor(condition: () => boolean, timeoutMs?: number): Promise<void>;
  waitFor(
    what: keyof DeviceEvents | (() => boolean),
    filterOrTimeout?: number | ((payload: never) => boolean),
    timeoutMs?: number,
  ): Promise<unknown> {
    if (typeof what === "function") {
      return waitForCondition(
        this,
        what,
        typeof filterOrTimeout === "number" ? filterOrTimeout : defaultWaitMs,
      );
    }
    const filter = typeof filterOrTimeout === "function" ? filterOrTimeout : undefined;
    const timeout = typeof filterOrTimeout === "number" ? filterOrTimeout : (timeoutMs ?? defaultWaitMs);
    return waitForEvent(this, what, filter as ((payload: unknown) => boolean) | undefined, timeout);
  }

  // ------------------------------------------------------------ commands

  /** Every command received, oldest first (the last `historyLimit`). */
  get commands(): CommandRecord[] {
    return [...this.#session.records];
  }

  commandsOf(type: string): CommandRecord[] {
    return this.#session.records.filter((c) => c.type === type);
  }

  clearCommands(): void {
    this.#session.records.length = 0;
  }

  /**
   * Replaces what a command does (after its arguments were validated): the handler's return
   * value (or promise) is the result; a thrown CommandError is the error reply; `noReply` leaves
   * it unanswered. Pass null to restore the virtual hardware.
   */
  handle<T extends CommandType>(type: T, handler: CommandOverride<T> | null): void {
    if (handler) this.#session.overrides.set(type, (args: CommandArgs<T>) => handler(args, this));
    else this.#session.overrides.delete(type);
  }

  // ------------------------------------------------------------ device → server

  /** Sends a `log` message (longer messages are cut at 4096 characters). False when offline. */
  sendLog(level: LogLevel, message: string): boolean {
    return this.#session.send(logMessage(level, message));
  }

  /** Sends a `state` report for an entity (id: 1–64 of A–Z a–z 0–9 _ . -). False when offline. */
  sendState(entityId: string, value: unknown): boolean {
    return this.#session.send(stateMessage(entityId, value));
  }

  /** Sends a custom event (lower_snake_case type, not one the protocol defines). False when offline. */
  sendEvent(type: string, fields: Record<string, unknown> = {}): boolean {
    return this.#session.send(eventMessage(type, fields));
  }

  /** Sends any text frame as it is (under 64 KB), for tests of bad input. False when offline. */
  sendRaw(text: string): boolean {
    const sent = this.#session.connection.send(text);
    if (sent) this.emit("sent", parseSent(text));
    return sent;
  }

  // ------------------------------------------------------------ hardware

  /** The onboard LED. */
  get led(): Level {
    return this.hardware.gpio.led;
  }

  /** Every change of the onboard LED with its time. */
  get ledHistory(): Transition[] {
    return this.hardware.gpio.history("LED");
  }

  /** Level changes of a pin with their times. */
  history(pin: PinId): Transition[] {
    return this.hardware.gpio.history(pin);
  }

  pin(pin: PinId): PinState {
    if (pin !== "LED") assertGpio(this.board, pin);
    return this.hardware.gpio.state(pin);
  }

  /** Drives an input from outside (a button, a sensor); null stops driving (the pull decides). */
  setInput(pin: number, level: Level | null): void {
    assertGpio(this.board, pin);
    if (level !== 0 && level !== 1 && level !== null) throw new RangeError(`level must be 0, 1 or null`);
    this.hardware.gpio.drive(pin, level);
  }

  /**
   * Presses a push button on `pin` (wired to the rail opposite the pin's pull) for `holdMs`, then
   * lets go: what `sim_press` does. Resolves once let go.
   */
  press(pin: number, holdMs = defaultHoldMs): Promise<void> {
    assertGpio(this.board, pin);
    if (!Number.isInteger(holdMs) || holdMs < 1) throw new RangeError("holdMs must be a whole number ≥ 1");
    return this.hardware.gpio.press(pin, holdMs);
  }

  /** Sets the voltage on GP26–28, clamped to 0–3.3 V. */
  setVoltage(pin: number, volts: number): void {
    this.hardware.adc.setVoltage(pin, volts);
  }

  /** What the chip's temperature sensor reads, °C. */
  setTemperature(celsius: number): void {
    if (!Number.isFinite(celsius)) throw new RangeError(`temperature must be a finite number`);
    this.hardware.adc.temperature = celsius;
  }

  get temperature(): number {
    return this.hardware.adc.temperature;
  }

  i2c(bus: 0 | 1): I2cBus {
    return this.hardware.i2c[bus];
  }

  /** The TMP102 at 0x48 (set its `celsius`), if still attached. */
  tmp102(bus: 0 | 1 = 0): Tmp102 | undefined {
    const device = this.hardware.i2c[bus].device(0x48);
    return device instanceof Tmp102 ? device : undefined;
  }

  /** The EEPROM at 0x50 (its `memory` is readable and writable), if still attached. */
  eeprom(bus: 0 | 1 = 0): Eeprom | undefined {
    const device = this.hardware.i2c[bus].device(0x50);
    return device instanceof Eeprom ? device : undefined;
  }

  spi(bus: 0 | 1): SpiBus {
    return this.hardware.spi[bus];
  }

  uart(uart: 0 | 1): Uart {
    return this.hardware.uart[uart];
  }

  /** Bytes arrive on a configured UART's RX: the device sends them as `uart_rx`. */
  receiveUart(uart: 0 | 1, bytes: readonly number[]): void {
    this.hardware.uart[uart].receive(bytes);
  }

  /** The pixels last written to a WS2812 strip on `pin`. */
  pixels(pin: number): Rgb[] | undefined {
    return this.hardware.ws2812.pixels(pin);
  }
}
