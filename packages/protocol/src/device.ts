import { z } from "zod";
import { Board, LogLevel } from "./fields.ts";
import {
  adc,
  allAdcPins,
  allGpios,
  busIds,
  type CommandType,
  commandRanges,
  commandTypes,
  type DeviceMessageType,
  deviceMessageTypes,
  edges,
  entityIdPattern,
  maxBytesPerMessage,
  maxFrameBytes,
  minDeviceFrameBytes,
  numberRuns,
  onboardLed,
  parities,
  pinLevels,
  pinModes,
  pulls,
  type Range,
  serverErrorCodes,
  spiModes,
  textLimits,
  uartBauds,
  uartDataBits,
  uartStopBits,
} from "./hardware.ts";

/**
 * The device protocol (firmware ↔ server) as zod schemas. JSON text frames over one WebSocket,
 * each an object with a `type`. Documented with an example of every message in docs/protocol.md.
 * The schemas know no board: `checkCommand` (hardware.ts) adds each board's pin rules.
 */

/** The device WebSocket's path. Credentials go in the upgrade request (HTTP Basic). */
export const deviceSocketPath = "/v1/device";

// ---------------------------------------------------------------- field types

/** One of `values`; the message lists them (or `listed`, where that reads better). */
const literals = <const T extends string | number>(values: readonly T[], listed = values.join(", ")) =>
  z.literal(values, { error: (issue) => `must be one of ${listed} (got ${JSON.stringify(issue.input)})` });
/** An integer in a range: one message, naming the range, whatever is wrong. */
const int = (range: Range) => {
  const error = (issue: { input?: unknown }) =>
    `must be an integer from ${range.min} to ${range.max} (got ${JSON.stringify(issue.input)})`;
  return z.number({ error }).int({ error, abort: true }).min(range.min, { error }).max(range.max, { error });
};
/** A number in a range, the same way. */
const number = (range: Range) => {
  const error = (issue: { input?: unknown }) =>
    `must be a number from ${range.min} to ${range.max} (got ${JSON.stringify(issue.input)})`;
  return z.number({ error }).min(range.min, { error }).max(range.max, { error });
};
const oneOf = <const T extends readonly [string, ...string[]]>(values: T) =>
  z.enum(values, {
    error: (issue) => `must be one of ${values.join(", ")} (got ${JSON.stringify(issue.input)})`,
  });

const gpioNumbers = `the GPIO numbers ${numberRuns(allGpios)}`;
const Gpio = literals(allGpios, gpioNumbers);
const Pin = literals([...allGpios, onboardLed], `${gpioNumbers} or "${onboardLed}"`);
const Byte = int(commandRanges.byte);
const Bytes = z.array(Byte).max(maxBytesPerMessage);
const CommandId = int(commandRanges.commandId);
const Bus = literals(busIds);
const PinLevel = literals(pinLevels);

// ---------------------------------------------------------------- server → device commands

/** Commands the server sends; each carries an `id` and is answered by a `result` or `error` with it. */
export const commandSchemas = {
  pin_mode: z.object({
    pin: Pin,
    mode: oneOf(pinModes),
    pull: oneOf(pulls).optional(),
  }),
  gpio_write: z.object({ pin: Pin, value: PinLevel }),
  gpio_read: z.object({ pin: Pin }),
  gpio_toggle: z.object({ pin: Pin }),
  gpio_watch: z.object({
    pin: Gpio,
    edge: oneOf(edges),
    debounceMs: int(commandRanges.debounceMs).optional(),
  }),
  gpio_unwatch: z.object({ pin: Gpio }),
  pwm: z.object({
    pin: Gpio,
    frequency: number(commandRanges.pwmFrequency),
    duty: number(commandRanges.pwmDuty),
  }),
  adc_read: z.object({ pin: literals(allAdcPins) }),
  temperature_read: z.object({}),
  i2c_configure: z.object({
    bus: Bus,
    sda: Gpio,
    scl: Gpio,
    frequency: int(commandRanges.i2cFrequency),
  }),
  i2c_write: z.object({
    bus: Bus,
    address: int(commandRanges.i2cAddress),
    data: Bytes,
  }),
  i2c_read: z.object({
    bus: Bus,
    address: int(commandRanges.i2cAddress),
    length: int(commandRanges.i2cReadLength),
    register: Byte.optional(),
  }),
  i2c_scan: z.object({ bus: Bus }),
  spi_configure: z.object({
    bus: Bus,
    sck: Gpio,
    tx: Gpio,
    rx: Gpio,
    frequency: int(commandRanges.spiFrequency),
    mode: literals(spiModes).optional(),
  }),
  spi_transfer: z.object({ bus: Bus, data: Bytes, cs: Gpio.optional() }),
  uart_configure: z.object({
    uart: Bus,
    tx: Gpio,
    rx: Gpio,
    baud: literals(uartBauds),
    dataBits: literals(uartDataBits).optional(),
    parity: oneOf(parities).optional(),
    stopBits: literals(uartStopBits).optional(),
  }),
  uart_write: z.object({ uart: Bus, data: Bytes }),
  ws2812_write: z.object({
    pin: Gpio,
    pixels: z
      .array(z.tuple([Byte, Byte, Byte]))
      .min(commandRanges.ws2812Pixels.min)
      .max(commandRanges.ws2812Pixels.max),
  }),
} as const satisfies Record<CommandType, z.ZodObject>;

export type CommandArgs<T extends CommandType> = z.infer<(typeof commandSchemas)[T]>;
export type Command = { [T in CommandType]: { type: T; id: number } & CommandArgs<T> }[CommandType];

/** What each command's `result.value` holds. */
export const commandResults = {
  pin_mode: z.null(),
  gpio_write: z.null(),
  gpio_read: z.object({ value: PinLevel }),
  gpio_toggle: z.object({ value: PinLevel }),
  gpio_watch: z.null(),
  gpio_unwatch: z.null(),
  pwm: z.null(),
  adc_read: z.object({
    volts: z.number().min(0).max(adc.maxVolts),
    raw: z.number().int().min(0).max(adc.maxRaw),
  }),
  temperature_read: z.object({ celsius: z.number() }),
  i2c_configure: z.null(),
  i2c_write: z.null(),
  i2c_read: z.object({ data: Bytes }),
  i2c_scan: z.object({ addresses: z.array(z.number().int()) }),
  spi_configure: z.null(),
  spi_transfer: z.object({ data: Bytes }),
  uart_configure: z.null(),
  uart_write: z.null(),
  ws2812_write: z.null(),
} as const satisfies Record<CommandType, z.ZodType>;
export type CommandResult<T extends CommandType> = z.infer<(typeof commandResults)[T]>;

// ---------------------------------------------------------------- device → server

export const Hello = z.object({
  type: z.literal("hello"),
  protocol: z.number().int().min(1),
  firmware: z.string().min(1).max(textLimits.firmware),
  board: Board,
  maxFrame: z
    .number()
    .int()
    .min(minDeviceFrameBytes)
    .max(maxFrameBytes - 1),
});
export type Hello = z.infer<typeof Hello>;

export const DeviceResult = z.object({
  type: z.literal("result"),
  id: CommandId,
  value: z.unknown().optional(),
});
export const DeviceError = z.object({
  type: z.literal("error"),
  id: CommandId.optional(),
  code: z.string().min(1).max(textLimits.errorCode),
  message: z.string().max(textLimits.errorMessage),
});
export const DeviceLog = z.object({
  type: z.literal("log"),
  level: LogLevel,
  message: z.string().max(textLimits.logMessage),
});
export const GpioChange = z.object({
  type: z.literal("gpio_change"),
  pin: Gpio,
  value: PinLevel,
});
export const UartRx = z.object({ type: z.literal("uart_rx"), uart: Bus, data: Bytes });
export const StateReport = z.object({
  type: z.literal("state"),
  entityId: z.string().regex(entityIdPattern),
  value: z.unknown(),
});

/** Device → server messages with a fixed meaning. */
export const deviceMessageSchemas = {
  hello: Hello,
  result: DeviceResult,
  error: DeviceError,
  log: DeviceLog,
  gpio_change: GpioChange,
  uart_rx: UartRx,
  state: StateReport,
} as const satisfies Record<DeviceMessageType, z.ZodObject>;

// ---------------------------------------------------------------- server → device (not commands)

export const Welcome = z.object({
  type: z.literal("welcome"),
  protocol: z.number().int(),
  deviceId: z.string(),
  serverTime: z.string(),
  heartbeatSeconds: z.number().int(),
});
export type Welcome = z.infer<typeof Welcome>;

/** The server's answer to a frame it could not accept (`id` echoes the device's, when it had one). */
export const ServerError = z.object({
  type: z.literal("error"),
  id: z.number().int().optional(),
  code: z.enum(serverErrorCodes),
  message: z.string(),
});
export type ServerError = z.infer<typeof ServerError>;

/** Every message type on the device socket, both directions, for the docs check. */
export const allDeviceMessageTypes = [...deviceMessageTypes, ...commandTypes, "welcome"] as const;

// ---------------------------------------------------------------- URL rule

/**
 * The device socket URL for a configured server address: with an explicit port, plain
 * `ws://host:port`; a bare hostname means TLS on port 443 (`wss://host`).
 */
export function deviceSocketUrl(server: string): string {
  const trimmed = server.trim().replace(/\/+$/, "");
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(trimmed);
  if (scheme) {
    if (!/^(https?|wss?)$/i.test(scheme[1]!)) {
      throw new TypeError(
        `unsupported scheme "${scheme[1]}://": give host:port, a bare host name, or an http(s):// or ws(s):// URL`,
      );
    }
    const url = new URL(trimmed);
    if (url.port === "0") throw new TypeError("port 0 is not a port a server can listen on");
    const secure = url.protocol === "https:" || url.protocol === "wss:";
    url.protocol = secure ? "wss:" : "ws:";
    url.pathname = deviceSocketPath;
    return url.toString();
  }
  const url = new URL(`http://${trimmed}`);
  // The port as written: URL drops one equal to http's default (80), which is still an explicit port.
  const authority = trimmed.replace(/[\t\n\r]/g, "").split(/[/?#\\]/, 1)[0]!;
  const written = /^(?:\[[^\]]*\]|[^:]*):(\d+)$/.exec(authority)?.[1];
  if (written !== undefined) {
    const port = Number(written);
    if (port === 0) throw new TypeError("port 0 is not a port a server can listen on");
    return `ws://${url.hostname}${port === 80 ? "" : `:${port}`}${deviceSocketPath}`;
  }
  return `wss://${url.hostname}${deviceSocketPath}`;
}
