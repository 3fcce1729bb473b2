import { z } from "zod";
import { Board } from "./api.ts";
import {
  adc,
  i2cAddressRange,
  maxBytesPerMessage,
  maxFrameBytes,
  onboardLed,
  pwmLimits,
  uartBauds,
} from "./hardware.ts";

/**
 * The device protocol (firmware ↔ server), version 1. JSON text frames over one WebSocket, each
 * an object with a `type`. Documented with an example of every message in docs/protocol.md.
 */
export const protocolVersion = 1;

/** The device WebSocket's path. Credentials go in the upgrade request (HTTP Basic). */
export const deviceSocketPath = "/v1/device";

export * from "./hardware.ts";

// ---------------------------------------------------------------- field types

const Gpio = z.number().int().min(0).max(29);
const Pin = z.union([Gpio, z.literal(onboardLed)]);
const Byte = z.number().int().min(0).max(255);
const Bytes = z.array(Byte).max(maxBytesPerMessage);
const CommandId = z
  .number()
  .int()
  .min(1)
  .max(2 ** 31 - 1);
const Bus = z.union([z.literal(0), z.literal(1)]);
const Level = z.enum(["debug", "info", "warn", "error"]);
export type LogLevel = z.infer<typeof Level>;

// ---------------------------------------------------------------- server → device commands

/** Commands the server sends; each carries an `id` and is answered by a `result` or `error` with it. */
export const commandSchemas = {
  pin_mode: z.object({
    pin: Pin,
    mode: z.enum(["input", "output"]),
    pull: z.enum(["up", "down", "none"]).optional(),
  }),
  gpio_write: z.object({ pin: Pin, value: z.union([z.literal(0), z.literal(1)]) }),
  gpio_read: z.object({ pin: Pin }),
  gpio_toggle: z.object({ pin: Pin }),
  gpio_watch: z.object({
    pin: Gpio,
    edge: z.enum(["rising", "falling", "both"]),
    debounceMs: z.number().int().min(0).max(1000).optional(),
  }),
  gpio_unwatch: z.object({ pin: Gpio }),
  pwm: z.object({
    pin: Gpio,
    frequency: z.number().min(pwmLimits.minFrequency).max(pwmLimits.maxFrequency),
    duty: z.number().min(0).max(1),
  }),
  adc_read: z.object({ pin: z.union([z.literal(26), z.literal(27), z.literal(28)]) }),
  temperature_read: z.object({}),
  i2c_configure: z.object({
    bus: Bus,
    sda: Gpio,
    scl: Gpio,
    frequency: z.number().int().min(10_000).max(1_000_000),
  }),
  i2c_write: z.object({
    bus: Bus,
    address: z.number().int().min(i2cAddressRange.min).max(i2cAddressRange.max),
    data: Bytes,
  }),
  i2c_read: z.object({
    bus: Bus,
    address: z.number().int().min(i2cAddressRange.min).max(i2cAddressRange.max),
    length: z.number().int().min(1).max(4096),
    register: Byte.optional(),
  }),
  i2c_scan: z.object({ bus: Bus }),
  spi_configure: z.object({
    bus: Bus,
    sck: Gpio,
    tx: Gpio,
    rx: Gpio,
    frequency: z.number().int().min(1_000).max(50_000_000),
    mode: z.union([z.literal(0), z.literal(1), z.literal(2), z.literal(3)]).optional(),
  }),
  spi_transfer: z.object({ bus: Bus, data: Bytes, cs: Gpio.optional() }),
  uart_configure: z.object({
    uart: Bus,
    tx: Gpio,
    rx: Gpio,
    baud: z
      .number()
      .int()
      .refine((b) => (uartBauds as readonly number[]).includes(b), "must be a standard baud rate"),
    dataBits: z.union([z.literal(5), z.literal(6), z.literal(7), z.literal(8)]).optional(),
    parity: z.enum(["none", "even", "odd"]).optional(),
    stopBits: z.union([z.literal(1), z.literal(2)]).optional(),
  }),
  uart_write: z.object({ uart: Bus, data: Bytes }),
  ws2812_write: z.object({
    pin: Gpio,
    pixels: z
      .array(z.tuple([Byte, Byte, Byte]))
      .min(1)
      .max(1024),
  }),
} as const;

export type CommandType = keyof typeof commandSchemas;
export const commandTypes = Object.keys(commandSchemas) as CommandType[];
export type CommandArgs<T extends CommandType> = z.infer<(typeof commandSchemas)[T]>;
export type Command = { [T in CommandType]: { type: T; id: number } & CommandArgs<T> }[CommandType];

/** What each command's `result.value` holds. */
export const commandResults = {
  pin_mode: z.null(),
  gpio_write: z.null(),
  gpio_read: z.object({ value: z.union([z.literal(0), z.literal(1)]) }),
  gpio_toggle: z.object({ value: z.union([z.literal(0), z.literal(1)]) }),
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
  firmware: z.string().min(1).max(64),
  board: Board,
  maxFrame: z
    .number()
    .int()
    .min(256)
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
  code: z.string().min(1).max(64),
  message: z.string().max(1024),
});
export const DeviceLog = z.object({ type: z.literal("log"), level: Level, message: z.string().max(4096) });
export const GpioChange = z.object({
  type: z.literal("gpio_change"),
  pin: Gpio,
  value: z.union([z.literal(0), z.literal(1)]),
});
export const UartRx = z.object({ type: z.literal("uart_rx"), uart: Bus, data: Bytes });
export const StateReport = z.object({
  type: z.literal("state"),
  entityId: z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/),
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
} as const;
export type DeviceMessageType = keyof typeof deviceMessageSchemas;

/**
 * Any other lower_snake_case type a device sends is a custom event: accepted and routed to the
 * script's `onMessage` as it is. Types the server sends (commands, `welcome`) are refused.
 */
export const customTypePattern = /^[a-z][a-z0-9_]{0,63}$/;

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
  code: z.enum(["malformed", "unknown_type", "invalid_message", "not_ready"]),
  message: z.string(),
});
export type ServerError = z.infer<typeof ServerError>;

/** Close codes the server uses on the device socket, with their meaning. */
export const deviceCloseCodes = {
  normal: 1000,
  goingAway: 1001,
  protocolError: 1002,
  policyViolation: 1008,
  tooBig: 1009,
  /** Another connection with the same credentials took over. */
  replaced: 4000,
  /** The device's credentials were rotated or the device was deleted. */
  revoked: 4001,
  /** No hello within the allowed time, or too many bad frames. */
  misbehaving: 4002,
} as const;

/** Every message type on the device socket, both directions, for the docs check. */
export const allDeviceMessageTypes = [
  ...Object.keys(deviceMessageSchemas),
  ...commandTypes,
  "welcome",
] as const;

// ---------------------------------------------------------------- URL rule

/**
 * The device socket URL for a configured server address: with an explicit port, plain
 * `ws://host:port`; a bare hostname means TLS on port 443 (`wss://host`).
 */
export function deviceSocketUrl(server: string): string {
  const trimmed = server.trim().replace(/\/+$/, "");
  const explicit = /^(https?|wss?):\/\//i.exec(trimmed);
  if (explicit) {
    const url = new URL(trimmed);
    const secure = url.protocol === "https:" || url.protocol === "wss:";
    url.protocol = secure ? "wss:" : "ws:";
    url.pathname = deviceSocketPath;
    return url.toString();
  }
  const url = new URL(`http://${trimmed}`);
  if (url.port) return `ws://${url.host}${deviceSocketPath}`;
  return `wss://${url.hostname}${deviceSocketPath}`;
}
