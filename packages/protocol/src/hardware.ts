// The rules of the device protocol as plain data, without zod: every limit, pattern and pin-role
// table lives here once. The zod schemas of @sdk/protocol derive from it, the @sdk/device library
// bundles it into every device script (it runs in QuickJS, so it must stay small and
// dependency-free), and scripts/generate-c-header.ts turns it into the firmware's C header.

export {
  binarySensorDeviceClasses,
  displayPrecisionRange,
  type EntityProblem,
  entitiesProblems,
  entityCommonFields,
  entityKindFields,
  entityProblems,
  haCommandProblem,
  isHaByte,
  isHaColor,
  sensorDeviceClasses,
  sensorDeviceClassUnits,
} from "./ha-entity-rules.ts";
export { jsonProblems, jsonTextTooDeep, jsonValueProblem, maxJsonDepth } from "./json-rules.ts";

// ---------------------------------------------------------------- versions and framing

/** The device protocol's version, sent in hello and welcome. */
export const protocolVersion = 1;

/** Frames of this many bytes or more are refused (close code 1009). */
export const maxFrameBytes = 64 * 1024;

/** The smallest frame limit a device may announce in hello (`maxFrame`). */
export const minDeviceFrameBytes = 256;

/** Byte arrays travel as JSON arrays of numbers; 12,000 of them ("255,") still fit in one 64 KB frame. */
export const maxBytesPerMessage = 12_000;

/** Longest text of a device `log` message, and of a device `error` message. */
export const textLimits = { logMessage: 4096, errorMessage: 1024, errorCode: 64, firmware: 64 } as const;

// ---------------------------------------------------------------- vocabulary

export const logLevels = ["debug", "info", "warn", "error"] as const;
/** How serious a log line is. */
export type LogLevel = (typeof logLevels)[number];

export const connectionStates = ["online", "offline"] as const;
/** Whether a device is connected to the server. */
export type ConnectionState = (typeof connectionStates)[number];

export const pinLevels = [0, 1] as const;
/** The level of a digital pin: 0 (low) or 1 (high). */
export type PinLevel = (typeof pinLevels)[number];

export const pinModes = ["input", "output"] as const;
export type PinMode = (typeof pinModes)[number];
export const pulls = ["up", "down", "none"] as const;
export type Pull = (typeof pulls)[number];
export const edges = ["rising", "falling", "both"] as const;
export type Edge = (typeof edges)[number];
export const parities = ["none", "even", "odd"] as const;
export type Parity = (typeof parities)[number];
export const spiModes = [0, 1, 2, 3] as const;
export const uartDataBits = [5, 6, 7, 8] as const;
export const uartStopBits = [1, 2] as const;

// ---------------------------------------------------------------- message types

/** Commands the server sends; each carries an `id` and is answered by a `result` or `error` with it. */
export const commandTypes = [
  "pin_mode",
  "gpio_write",
  "gpio_read",
  "gpio_toggle",
  "gpio_watch",
  "gpio_unwatch",
  "pwm",
  "adc_read",
  "temperature_read",
  "i2c_configure",
  "i2c_write",
  "i2c_read",
  "i2c_scan",
  "spi_configure",
  "spi_transfer",
  "uart_configure",
  "uart_write",
  "ws2812_write",
] as const;
export type CommandType = (typeof commandTypes)[number];

/** Device → server messages with a fixed meaning. */
export const deviceMessageTypes = [
  "hello",
  "result",
  "error",
  "log",
  "gpio_change",
  "uart_rx",
  "state",
] as const;
export type DeviceMessageType = (typeof deviceMessageTypes)[number];

/** Server → device messages that are not commands. */
export const serverMessageTypes = ["welcome", "error"] as const;

/** Types only the server sends: a device that sends one is answered `unknown_type`. */
export const reservedMessageTypes = [...commandTypes, "welcome"] as const;

/**
 * Any other lower_snake_case type a device sends is a custom event: accepted and routed to the
 * script's `onMessage` as it is.
 */
export const customTypePattern = /^[a-z][a-z0-9_]{0,63}$/;
export const messageTypeMaxLength = 64;

export function isCommandType(type: string): type is CommandType {
  return (commandTypes as readonly string[]).includes(type);
}

/** A type a device may send as a custom event: lower_snake_case and not one the protocol defines. */
export function isCustomMessageType(type: string): boolean {
  return (
    customTypePattern.test(type) &&
    !(reservedMessageTypes as readonly string[]).includes(type) &&
    !(deviceMessageTypes as readonly string[]).includes(type)
  );
}

// ---------------------------------------------------------------- errors and close codes

/** Codes of the server's `error` answer to a frame it could not accept. */
export const serverErrorCodes = ["malformed", "unknown_type", "invalid_message", "not_ready"] as const;

/** What the server (and a device, for frames it receives) says about a frame it cannot parse. */
export const frameProblems = {
  notJson: "the frame is not valid JSON",
  notObject: "a frame must be a JSON object",
  noType: "a frame must have a string `type`",
  binary: "binary frames are not part of the protocol: send JSON text",
  helloFirst: "send hello first",
} as const;

/** Codes a device uses in an `error` reply to a command. Other codes are passed on as they are. */
export const deviceErrorCodes = {
  invalid_argument: "the arguments are wrong for this board (a pin it does not have, a bus not configured)",
  unsupported: "the board cannot do this (for example the LED pin as an input)",
  io_error: "the hardware did not respond (an I2C address that does not acknowledge)",
  busy: "the device is busy and cannot take the command now",
  malformed: "the frame could not be parsed",
} as const;
export type DeviceErrorCode = keyof typeof deviceErrorCodes;

/** Close codes the server uses on the device socket, with their meaning. */
export const deviceCloseCodes = {
  normal: 1000,
  goingAway: 1001,
  protocolError: 1002,
  policyViolation: 1008,
  tooBig: 1009,
  /** The server is restarting (an upgrade): the reason carries a retry hint (`restartCloseReason`). */
  serviceRestart: 1012,
  /** Another connection with the same credentials took over. */
  replaced: 4000,
  /** The device's credentials were rotated or the device was deleted. */
  revoked: 4001,
  /** No hello within the allowed time, or too many bad frames. */
  misbehaving: 4002,
} as const;

/**
 * Retrying after 1012 (service restart): the reason says `server restarting; retry in <min>-<max> ms`.
 * A device draws each retry uniformly in [min, max) for `windowMs` after the close (or until it is
 * back), then falls back to its normal backoff. A hint is clamped into [`hintFloorMs`,
 * `hintCeilingMs`] (the backoff cap): never a tight loop, never longer than the normal backoff. `lost*`: after a connection that had been up for 10 s
 * or more ends without a close frame (1006: the server was killed, the network dropped), the backoff
 * ceiling is at most `lostMaxMs` for `lostWindowMs`.
 */
export const restartRetry = {
  minMs: 100,
  maxMs: 1000,
  windowMs: 30_000,
  lostMaxMs: 2000,
  lostWindowMs: 10_000,
  hintFloorMs: 100,
  hintCeilingMs: 30_000,
} as const;

/** The reason of a 1012 close: `server restarting; retry in 100-1000 ms`. */
export function restartCloseReason(
  minMs: number = restartRetry.minMs,
  maxMs: number = restartRetry.maxMs,
): string {
  return `server restarting; retry in ${Math.round(minMs)}-${Math.round(maxMs)} ms`;
}

/**
 * The retry window a 1012 reason names, clamped into [`hintFloorMs`, `hintCeilingMs`], or null
 * when it names none or nothing is left of it after clamping (use `restartRetry`'s).
 */
export function parseRestartHint(reason: string): { minMs: number; maxMs: number } | null {
  const match = /retry in (\d{1,6})-(\d{1,6}) ms/.exec(reason);
  if (!match) return null;
  const clamp = (ms: number) => Math.min(restartRetry.hintCeilingMs, Math.max(restartRetry.hintFloorMs, ms));
  const minMs = clamp(Number(match[1]));
  const maxMs = clamp(Number(match[2]));
  return maxMs > minMs ? { minMs, maxMs } : null;
}

// ---------------------------------------------------------------- state and entities

/** Entity ids of `state` reports and Home Assistant entities. */
export const entityIdPattern = /^[A-Za-z0-9_.-]{1,64}$/;
export const entityIdMaxLength = 64;
/** A state value is at most 8 KB of JSON; a device keeps at most 200 entities. */
export const stateLimits = { valueMaxBytes: 8192, entitiesPerDevice: 200 } as const;

export const entityKinds = ["sensor", "binary_sensor", "switch", "light"] as const;
/** A Home Assistant entity kind. */
export type EntityKind = (typeof entityKinds)[number];
export const stateClasses = ["measurement", "total", "total_increasing"] as const;
export type StateClass = (typeof stateClasses)[number];
/** Lengths of an entity's texts, and how many entities one deployment may declare. */
export const entityLimits = { nameMaxLength: 100, textMaxLength: 64, perDeployment: 200 } as const;

/** Ids of `ha.entities`: what Home Assistant's discovery topics and unique ids allow (no `.`). */
export const haEntityIdPattern = /^[A-Za-z0-9_-]{1,64}$/;

/** A Home Assistant entity fed by `DEVICE.emitState(id, value)`. */
export interface EntityConfig {
  /** The entity id the script emits (`emitState("temperature", 21.5)`). */
  id: string;
  kind: EntityKind;
  /** Shown in Home Assistant. */
  name: string;
  /** Unit of measurement, e.g. "°C", "%" (sensors). */
  unit?: string;
  /** Home Assistant device class, e.g. "temperature", "humidity". */
  deviceClass?: string;
  /** Home Assistant icon, e.g. "mdi:thermometer". */
  icon?: string;
  /** Home Assistant state class for sensors: measurement, total or total_increasing. */
  stateClass?: StateClass;
  /** Decimals Home Assistant shows (sensors). */
  displayPrecision?: number;
  /** The light can be dimmed (lights): commands carry `brightness` 0–255. */
  brightness?: boolean;
  /** The light takes a colour (lights): commands carry `color` {r, g, b}. */
  rgb?: boolean;
}

/**
 * A switch or light command from Home Assistant, as a script's `onMessage` receives it. The script
 * confirms with `emitState(entityId, …)`: a switch's state is a boolean or "ON"/"OFF", a light's
 * an object `{ state, brightness?, color? }`.
 */
export interface HaCommand {
  type: "ha_command";
  entityId: string;
  kind: "switch" | "light";
  state: "ON" | "OFF";
  /** 0–255, for lights declared with `brightness: true`. */
  brightness?: number;
  /** For lights declared with `rgb: true`. */
  color?: { r: number; g: number; b: number };
}

// ---------------------------------------------------------------- boards and pins

/** GPIO numbers brought out to the header of both the Pico W and the Pico 2 W. */
const headerGpios = [
  0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 26, 27, 28,
] as const;

/** The onboard LED is wired to the wireless chip, not to an RP2040/RP2350 GPIO: it is its own named pin. */
export const onboardLed = "LED" as const;

/** Commands whose `pin` may be the onboard LED (a plain digital output). */
export const ledCommands = ["pin_mode", "gpio_write", "gpio_read", "gpio_toggle"] as const;

/**
 * Which header pins each bus can use (the RP2040 and RP2350 share these function-select tables;
 * the RP2350's extra UART options on other function slots are not offered).
 */
const rp2Buses = {
  i2c: {
    0: { sda: [0, 4, 8, 12, 16, 20, 28], scl: [1, 5, 9, 13, 17, 21] },
    1: { sda: [2, 6, 10, 14, 18, 22, 26], scl: [3, 7, 11, 15, 19, 27] },
  },
  spi: {
    0: { sck: [2, 6, 18, 22], tx: [3, 7, 19], rx: [0, 4, 16, 20] },
    1: { sck: [10, 14, 26], tx: [11, 15, 27], rx: [8, 12, 28] },
  },
  uart: { 0: { tx: [0, 12, 16, 28], rx: [1, 13, 17] }, 1: { tx: [4, 8, 20], rx: [5, 9, 21] } },
} as const;

export const boards = {
  pico_w: {
    name: "Raspberry Pi Pico W",
    chip: "RP2040",
    gpios: headerGpios,
    adcPins: [26, 27, 28],
    ...rp2Buses,
  },
  pico2_w: {
    name: "Raspberry Pi Pico 2 W",
    chip: "RP2350",
    gpios: headerGpios,
    adcPins: [26, 27, 28],
    ...rp2Buses,
  },
} as const;

/** A board this system knows: the Raspberry Pi Pico W or Pico 2 W. */
export type Board = keyof typeof boards;
export const boardIds = Object.keys(boards) as Board[];
type BoardInfo = (typeof boards)[Board];
/** A header GPIO of any supported board (GPIO numbers, not physical pin numbers). */
export type Gpio = BoardInfo["gpios"][number];
/** An ADC-capable pin of any supported board. */
export type AdcPin = BoardInfo["adcPins"][number];
type Peripheral = "i2c" | "spi" | "uart";
/** The two instances of each bus (I2C0/1, SPI0/1, UART0/1). */
export const busIds = [0, 1] as const;
export type BusId = (typeof busIds)[number];

/** Every GPIO some supported board has, ascending. */
export const allGpios: readonly Gpio[] = [...new Set(boardIds.flatMap((b) => boards[b].gpios))].sort(
  (a, b) => a - b,
);
/** Every ADC pin some supported board has, ascending. */
export const allAdcPins: readonly AdcPin[] = [...new Set(boardIds.flatMap((b) => boards[b].adcPins))].sort(
  (a, b) => a - b,
);

// ---------------------------------------------------------------- ranges

/** ADC: 12-bit samples over 0–3.3 V. */
export const adc = { maxVolts: 3.3, maxRaw: 4095 } as const;

/** Inclusive ranges of command arguments. */
export const commandRanges = {
  byte: { min: 0, max: 255 },
  debounceMs: { min: 0, max: 1000 },
  pwmFrequency: { min: 8, max: 1_000_000 },
  pwmDuty: { min: 0, max: 1 },
  i2cFrequency: { min: 10_000, max: 1_000_000 },
  i2cAddress: { min: 0x08, max: 0x77 },
  i2cReadLength: { min: 1, max: 4096 },
  spiFrequency: { min: 1_000, max: 50_000_000 },
  spiMode: { min: spiModes[0], max: spiModes[spiModes.length - 1]! },
  uartDataBits: { min: uartDataBits[0], max: uartDataBits[uartDataBits.length - 1]! },
  ws2812Pixels: { min: 1, max: 1024 },
  commandId: { min: 1, max: 2 ** 31 - 1 },
} as const;
export type Range = { readonly min: number; readonly max: number };

export const uartBauds = [
  300, 1200, 2400, 4800, 9600, 19200, 38400, 57600, 115200, 230400, 460800, 921600,
] as const;

// ---------------------------------------------------------------- checkCommand

/** One argument of a command, and the rule it must follow. */
type ArgRule =
  | { kind: "digitalPin" | "gpio" | "adcPin"; what?: string }
  | { kind: "level" | "bytes" | "pixels" }
  | { kind: "bus"; what?: string }
  | { kind: "busPin"; peripheral: Peripheral; bus: string; role: string }
  | { kind: "integer" | "number"; range: Range; what?: string; unit?: string }
  | { kind: "oneOf"; options: readonly (string | number)[] }
  | { kind: "i2cAddress" | "baud" };

/** A command's arguments in the order they are checked; `optional` ones may be left out. */
export type ArgSpec = ArgRule & { name: string; optional?: true };

const bus = (name: string, what = name): ArgSpec => ({ name, kind: "bus", what });
const busPin = (peripheral: Peripheral, busArg: string, role: string): ArgSpec => ({
  name: role,
  kind: "busPin",
  peripheral,
  bus: busArg,
  role,
});
const data: ArgSpec = { name: "data", kind: "bytes" };
const busFrequency = (range: Range, what: string): ArgSpec => ({
  name: "frequency",
  kind: "integer",
  range,
  what,
  unit: " Hz",
});

/** Every command's arguments. The zod schemas of @sdk/protocol and the C header derive from this. */
export const commandArgs: { readonly [T in CommandType]: readonly ArgSpec[] } = {
  pin_mode: [
    { name: "pin", kind: "digitalPin" },
    { name: "mode", kind: "oneOf", options: pinModes },
    { name: "pull", kind: "oneOf", options: pulls, optional: true },
  ],
  gpio_write: [
    { name: "pin", kind: "digitalPin" },
    { name: "value", kind: "level" },
  ],
  gpio_read: [{ name: "pin", kind: "digitalPin" }],
  gpio_toggle: [{ name: "pin", kind: "digitalPin" }],
  gpio_watch: [
    { name: "pin", kind: "gpio" },
    { name: "edge", kind: "oneOf", options: edges },
    { name: "debounceMs", kind: "integer", range: commandRanges.debounceMs, optional: true },
  ],
  gpio_unwatch: [{ name: "pin", kind: "gpio" }],
  pwm: [
    { name: "pin", kind: "gpio" },
    { name: "frequency", kind: "number", range: commandRanges.pwmFrequency, unit: " Hz" },
    { name: "duty", kind: "number", range: commandRanges.pwmDuty },
  ],
  adc_read: [{ name: "pin", kind: "adcPin" }],
  temperature_read: [],
  i2c_configure: [
    bus("bus"),
    busPin("i2c", "bus", "sda"),
    busPin("i2c", "bus", "scl"),
    busFrequency(commandRanges.i2cFrequency, "I2C frequency"),
  ],
  i2c_write: [bus("bus"), { name: "address", kind: "i2cAddress" }, data],
  i2c_read: [
    bus("bus"),
    { name: "address", kind: "i2cAddress" },
    { name: "length", kind: "integer", range: commandRanges.i2cReadLength },
    { name: "register", kind: "integer", range: commandRanges.byte, what: "register", optional: true },
  ],
  i2c_scan: [bus("bus")],
  spi_configure: [
    bus("bus"),
    busPin("spi", "bus", "sck"),
    busPin("spi", "bus", "tx"),
    busPin("spi", "bus", "rx"),
    busFrequency(commandRanges.spiFrequency, "SPI frequency"),
    { name: "mode", kind: "integer", range: commandRanges.spiMode, what: "SPI mode", optional: true },
  ],
  spi_transfer: [bus("bus"), data, { name: "cs", kind: "gpio", what: "cs", optional: true }],
  uart_configure: [
    bus("uart"),
    busPin("uart", "uart", "tx"),
    busPin("uart", "uart", "rx"),
    { name: "baud", kind: "baud" },
    { name: "dataBits", kind: "integer", range: commandRanges.uartDataBits, optional: true },
    { name: "parity", kind: "oneOf", options: parities, optional: true },
    { name: "stopBits", kind: "oneOf", options: uartStopBits, optional: true },
  ],
  uart_write: [bus("uart"), data],
  ws2812_write: [
    { name: "pin", kind: "gpio" },
    { name: "pixels", kind: "pixels" },
  ],
};

const describe = (value: unknown): string =>
  typeof value === "string" ? JSON.stringify(value) : String(value);
const isInteger = (value: unknown, range: Range): value is number =>
  typeof value === "number" && Number.isInteger(value) && value >= range.min && value <= range.max;
const includes = (list: readonly unknown[], value: unknown) => list.includes(value);
const gpList = (pins: readonly number[]) => pins.map((p) => `GP${p}`).join(", ");

/** "0–22 and 26–28": a sorted list of numbers as runs. */
export function numberRuns(numbers: readonly number[]): string {
  const parts: string[] = [];
  for (let i = 0; i < numbers.length; i++) {
    const start = numbers[i]!;
    while (numbers[i + 1] === numbers[i]! + 1) i++;
    parts.push(start === numbers[i] ? String(start) : `${start}–${numbers[i]}`);
  }
  return parts.length > 1 ? `${parts.slice(0, -1).join(", ")} and ${parts.at(-1)}` : (parts[0] ?? "none");
}

function checkArg(board: BoardInfo, spec: ArgSpec, args: Record<string, unknown>): string | null {
  const value = args[spec.name];
  switch (spec.kind) {
    case "digitalPin":
    case "gpio":
      if (spec.kind === "digitalPin" && value === onboardLed) return null;
      if (includes(board.gpios, value)) return null;
      return `${spec.what ?? "pin"} ${describe(value)} is not a GPIO of the ${board.name} (GPIO numbers ${numberRuns(board.gpios)}, not physical pin numbers)`;
    case "adcPin":
      if (includes(board.adcPins, value)) return null;
      return `pin ${describe(value)} cannot read analog values: the ADC pins are ${gpList(board.adcPins).replace(/, (?=[^,]*$)/, " and ")} (0–${adc.maxVolts} V)`;
    case "level":
      return includes(pinLevels, value) ? null : `${spec.name} must be 0 or 1 (got ${describe(value)})`;
    case "bus":
      return includes(busIds, value) ? null : `${spec.what} must be 0 or 1 (got ${describe(value)})`;
    case "busPin": {
      if (!includes(board.gpios, value)) {
        return `${spec.role} pin ${describe(value)} is not a GPIO of the ${board.name} (GPIO numbers ${numberRuns(board.gpios)}, not physical pin numbers)`;
      }
      const busId = args[spec.bus] as BusId;
      const options = (board[spec.peripheral][busId] as Record<string, readonly number[]>)[spec.role] ?? [];
      if (includes(options, value)) return null;
      return `GP${value} cannot be ${spec.peripheral.toUpperCase()}${busId} ${spec.role.toUpperCase()}; use one of ${gpList(options)}`;
    }
    case "integer":
    case "number": {
      const ok =
        spec.kind === "integer"
          ? isInteger(value, spec.range)
          : typeof value === "number" && value >= spec.range.min && value <= spec.range.max;
      if (ok) return null;
      const what = spec.what ?? spec.name;
      const byte = spec.range === commandRanges.byte ? " a byte" : "";
      return `${what} must be${byte} ${spec.range.min}–${spec.range.max}${spec.unit ?? ""} (got ${describe(value)})`;
    }
    case "oneOf":
      if (includes(spec.options, value)) return null;
      return spec.options.length === 2 && typeof spec.options[0] === "number"
        ? `${spec.name} must be ${spec.options.join(" or ")} (got ${describe(value)})`
        : `${spec.name} must be one of ${spec.options.join(", ")} (got ${describe(value)})`;
    case "i2cAddress": {
      if (isInteger(value, commandRanges.i2cAddress)) return null;
      const hex = (n: number) => `0x${n.toString(16).padStart(2, "0")}`;
      const got = typeof value === "number" ? `0x${value.toString(16)}` : describe(value);
      return `I2C address must be ${hex(commandRanges.i2cAddress.min)}–${hex(commandRanges.i2cAddress.max)} (got ${got})`;
    }
    case "baud":
      if (includes(uartBauds, value)) return null;
      return `baud must be a standard rate (${uartBauds.join(", ")}; got ${describe(value)})`;
    case "bytes": {
      if (!Array.isArray(value)) return `${spec.name} must be an array of bytes`;
      if (value.length > maxBytesPerMessage) {
        return `${spec.name} has ${value.length} bytes; at most ${maxBytesPerMessage} fit in one message`;
      }
      for (let i = 0; i < value.length; i++) {
        if (!isInteger(value[i], commandRanges.byte))
          return `${spec.name}[${i}] must be a byte 0–255 (got ${describe(value[i])})`;
      }
      return null;
    }
    case "pixels": {
      const { min, max } = commandRanges.ws2812Pixels;
      if (!Array.isArray(value) || value.length < min || value.length > max)
        return `pixels must be an array of ${min}–${max} [r, g, b] triples`;
      for (let i = 0; i < value.length; i++) {
        const p: unknown = value[i];
        if (!Array.isArray(p) || p.length !== 3 || !p.every((c) => isInteger(c, commandRanges.byte)))
          return `pixels[${i}] must be [r, g, b] with each value 0–255 (got ${JSON.stringify(p)})`;
      }
      return null;
    }
  }
}

/**
 * Checks a command's arguments against the protocol and the board's pin tables: the pin exists on
 * this board, `LED` only where a plain digital pin is meant, ADC only on the ADC pins, bus pins
 * only where that bus can reach them, every value in range. Arguments not listed for the command
 * are ignored (as the schemas ignore them).
 *
 * Returns null when the arguments are valid, otherwise a message for an `invalid_argument` error
 * (it never throws; each caller raises its own error type with the message).
 */
export function checkCommand(board: Board, type: string, args: unknown): string | null {
  const info = Object.hasOwn(boards, board) ? boards[board] : undefined;
  if (!info) return `unknown board ${describe(board)}; boards: ${boardIds.join(", ")}`;
  if (!isCommandType(type))
    return `unknown command ${JSON.stringify(type)}; commands: ${commandTypes.join(", ")}`;
  if (typeof args !== "object" || args === null || Array.isArray(args))
    return `${type}: the arguments must be an object`;
  const record = args as Record<string, unknown>;
  for (const spec of commandArgs[type]) {
    if (record[spec.name] === undefined) {
      if (spec.optional) continue;
      return `${spec.name} is required`;
    }
    const problem = checkArg(info, spec, record);
    if (problem) return problem;
  }
  return null;
}
