import {
  type Board,
  type CommandType,
  commandTypes,
  customTypePattern,
  DeviceLog,
  deviceMessageSchemas,
  deviceSocketUrl,
  Hello,
  type LogLevel,
  maxFrameBytes,
  protocolVersion,
  StateReport,
  Welcome,
} from "@sdk/protocol";
import packageJson from "../package.json" with { type: "json" };
import { defaultReconnect } from "./backoff.ts";
import { assertGpio } from "./board.ts";
import { Connection } from "./connection.ts";
import { Emitter } from "./emitter.ts";
import type { Level, PinId, PinState, Transition } from "./hardware/gpio.ts";
import type { I2cBus } from "./hardware/i2c.ts";
import { Eeprom, Tmp102 } from "./hardware/i2c-devices.ts";
import { Hardware } from "./hardware/index.ts";
import type { SpiBus } from "./hardware/spi.ts";
import type { Uart } from "./hardware/uart.ts";
import type { Rgb } from "./hardware/ws2812.ts";
import { CommandRunner } from "./runner.ts";
import type {
  CommandOverride,
  CommandRecord,
  DeviceEvents,
  DeviceMessage,
  DeviceStatus,
  SimulatedDeviceOptions,
} from "./types.ts";
import { defaultWaitMs, waitForCondition, waitForEvent } from "./wait.ts";

export const simulatorVersion: string = packageJson.version;

const reservedTypes = new Set<string>([...Object.keys(deviceMessageSchemas), ...commandTypes, "welcome"]);

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
  readonly #options: SimulatedDeviceOptions;
  readonly #now: () => number;
  readonly #historyLimit: number;
  readonly #connection: Connection;
  readonly #runner: CommandRunner;
  #status: DeviceStatus = "stopped";
  #welcome: Welcome | null = null;

  constructor(options: SimulatedDeviceOptions) {
    super();
    this.#options = options;
    this.deviceId = options.deviceId;
    this.board = options.board ?? "pico_w";
    this.firmware = options.firmware ?? `sim-${simulatorVersion}`;
    this.url = deviceSocketUrl(options.server);
    const hello = Hello.safeParse(this.#hello());
    if (!hello.success) {
      const issue = hello.error.issues[0]!;
      throw new RangeError(`invalid device options: ${issue.path.join(".")}: ${issue.message}`);
    }
    if (!options.deviceId || options.deviceId.includes(":")) {
      throw new RangeError('invalid device options: deviceId must be non-empty and without ":"');
    }
    this.#now = options.now ?? Date.now;
    this.#historyLimit = options.historyLimit ?? 10_000;
    this.hardware = new Hardware(this.board, {
      now: this.#now,
      historyLimit: this.#historyLimit,
      send: (event) => this.#runner.hardwareEvent(event),
    });
    this.#runner = new CommandRunner({
      board: this.board,
      hardware: this.hardware,
      device: this,
      now: this.#now,
      historyLimit: this.#historyLimit,
      send: (message) => this.#send(message),
      done: (record) => this.emit("command", record),
    });
    const reconnect =
      options.reconnect === false ? false : { ...defaultReconnect, ...(options.reconnect ?? {}) };
    this.#connection = new Connection(
      {
        url: this.url,
        deviceId: options.deviceId,
        secret: options.secret,
        maxPayload: options.maxFrame ?? maxFrameBytes - 1,
        reconnect,
        handshakeTimeoutMs: options.handshakeTimeoutMs ?? 10_000,
        now: this.#now,
      },
      {
        connecting: (attempt, url) => {
          this.#status = "connecting";
          this.emit("connecting", { attempt, url });
        },
        open: () => this.#opened(),
        text: (text) => this.#receive(text),
        binary: () => this.#sendError(undefined, "malformed", "binary frames are not part of the protocol"),
        closed: (code, reason) => {
          this.#welcome = null;
          this.#status = "waiting";
          this.emit("disconnected", { code, reason });
        },
        authFailed: (failure) => {
          this.emit("authFailed", failure);
          this.emit("error", Object.assign(new Error(failure.message), { code: failure.code }));
        },
        error: (error) => this.emit("error", error),
        retry: (attempt, delayMs) => {
          this.#status = "waiting";
          this.emit("reconnecting", { attempt, delayMs });
        },
        ignored: (what) => this.emit("ignored", { what }),
        idle: () => {
          this.#status = "stopped";
          this.emit("idle", {});
        },
      },
    );
  }

  // ------------------------------------------------------------ lifecycle

  get status(): DeviceStatus {
    return this.#status;
  }

  /** True between welcome and the end of that connection. */
  get connected(): boolean {
    return this.#status === "connected";
  }

  /** The welcome of the current connection. */
  get welcome(): Welcome | null {
    return this.#welcome;
  }

  /** Connects, and keeps reconnecting until stop() or kill(). */
  start(): this {
    this.#connection.start();
    return this;
  }

  /** Closes cleanly (close code 1000) and stops reconnecting. */
  stop(): Promise<void> {
    return this.#connection.stop(1000, "device stopped");
  }

  /**
   * Destroys the TCP socket without a close frame, like a power cut. It stays down unless
   * `reconnect` is true (a network drop).
   */
  kill(options: { reconnect?: boolean } = {}): void {
    this.#connection.kill(options.reconnect ?? false);
  }

  /** Hangs (true) or resumes: a frozen device keeps its socket but answers no pings or frames. */
  freeze(frozen = true): void {
    this.#connection.freeze(frozen);
  }

  /** Resolves with the next `event` (passing `filter`); rejects after `timeoutMs` (default 5 s). */
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
    return [...this.#runner.records];
  }

  commandsOf(type: string): CommandRecord[] {
    return this.#runner.records.filter((c) => c.type === type);
  }

  clearCommands(): void {
    this.#runner.records.length = 0;
  }

  /**
   * Replaces what a command does (after its arguments were validated): the handler's return
   * value (or promise) is the result; a thrown CommandError is the error reply; `noReply` leaves
   * it unanswered. Pass null to restore the virtual hardware.
   */
  handle<T extends CommandType>(type: T, handler: CommandOverride<T> | null): void {
    if (handler) this.#runner.overrides.set(type, handler as CommandOverride<never>);
    else this.#runner.overrides.delete(type);
  }

  // ------------------------------------------------------------ device → server

  /** Sends a `log` message (longer messages are cut at 4096 characters). False when offline. */
  sendLog(level: LogLevel, message: string): boolean {
    return this.#send(DeviceLog.parse({ type: "log", level, message: message.slice(0, 4096) }));
  }

  /** Sends a `state` report for an entity (id: 1–64 of A–Z a–z 0–9 _ . -). False when offline. */
  sendState(entityId: string, value: unknown): boolean {
    const parsed = StateReport.safeParse({ type: "state", entityId, value });
    if (!parsed.success) throw new RangeError(`invalid entity id ${JSON.stringify(entityId)}`);
    return this.#send({ type: "state", entityId, value });
  }

  /** Sends a custom event (lower_snake_case type, not one the protocol defines). False when offline. */
  sendEvent(type: string, fields: Record<string, unknown> = {}): boolean {
    if (!customTypePattern.test(type) || reservedTypes.has(type)) {
      throw new RangeError(
        `${JSON.stringify(type)} is not a custom event type (lower_snake_case, not reserved)`,
      );
    }
    if ("type" in fields) throw new RangeError("custom event fields cannot include `type`");
    return this.#send({ type, ...fields });
  }

  /** Sends any text frame as it is (under 64 KB), for tests of bad input. False when offline. */
  sendRaw(text: string): boolean {
    const sent = this.#connection.send(text);
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

  // ------------------------------------------------------------ internals

  #opened(): void {
    this.#status = "handshaking";
    this.emit("open", { url: this.url });
    if (this.#options.sendHello !== false) this.#send(this.#hello());
    this.#connection.setWatchdog(this.#options.welcomeTimeoutMs ?? 15_000);
  }

  #hello(): Hello {
    return {
      type: "hello",
      protocol: this.#options.protocol ?? protocolVersion,
      firmware: this.firmware,
      board: this.board,
      maxFrame: this.#options.maxFrame ?? maxFrameBytes - 1,
    };
  }

  #receive(text: string): void {
    const problem = (message: string) => this.#sendError(undefined, "malformed", message);
    let frame: unknown;
    try {
      frame = JSON.parse(text);
    } catch {
      problem("the frame is not valid JSON");
      return;
    }
    if (typeof frame !== "object" || frame === null || Array.isArray(frame)) {
      problem("a frame must be a JSON object");
      return;
    }
    const { type, id, ...args } = frame as Record<string, unknown>;
    if (typeof type !== "string") {
      problem("a frame must have a string `type`");
      return;
    }
    if (type === "welcome") {
      this.#welcomed(frame);
      return;
    }
    if (type === "error") {
      const { code, message } = args;
      this.emit("serverError", {
        code: String(code),
        message: String(message),
        ...(typeof id === "number" ? { id } : {}),
      });
      return;
    }
    this.#runner.receive(type, id, args);
  }

  #welcomed(frame: object): void {
    const parsed = Welcome.safeParse(frame);
    if (!parsed.success) {
      this.emit("error", new Error("the server sent an invalid welcome"));
      this.#sendError(undefined, "malformed", "welcome: unexpected shape");
      return;
    }
    this.#welcome = parsed.data;
    this.#status = "connected";
    const timeout = this.#options.heartbeatTimeoutMs;
    this.#connection.setWatchdog(
      timeout === false ? 0 : (timeout ?? Math.max(0, parsed.data.heartbeatSeconds) * 2_500),
    );
    this.emit("connected", parsed.data);
  }

  #sendError(id: number | undefined, code: string, message: string): void {
    this.#runner.sendError(id, code, message);
  }

  #send(message: DeviceMessage): boolean {
    const sent = this.#connection.send(JSON.stringify(message));
    if (sent) this.emit("sent", message);
    return sent;
  }
}

function parseSent(text: string): DeviceMessage {
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value === "object" && value !== null && !Array.isArray(value)) {
      const message = value as Record<string, unknown>;
      return { ...message, type: typeof message.type === "string" ? message.type : "raw" };
    }
  } catch {
    // not JSON
  }
  return { type: "raw", text };
}
