import {
  adc,
  boards,
  i2cAddressRange,
  maxBytesPerMessage,
  maxFrameBytes,
  onboardLed,
  pwmLimits,
  uartBauds,
} from "@sdk/protocol/hardware";
import { invalid } from "./errors.ts";
import type { Board } from "./pins.ts";

/** UTF-8 bytes of a string (QuickJS has no TextEncoder). */
export function utf8Bytes(text: string): number[] {
  const out: number[] = [];
  for (const char of text) {
    let c = char.codePointAt(0)!;
    if (c >= 0xd800 && c <= 0xdfff) c = 0xfffd; // a lone surrogate is not text: the replacement character
    if (c < 0x80) out.push(c);
    else if (c < 0x800) out.push(0xc0 | (c >> 6), 0x80 | (c & 63));
    else if (c < 0x10000) out.push(0xe0 | (c >> 12), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
    else out.push(0xf0 | (c >> 18), 0x80 | ((c >> 12) & 63), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
  }
  return out;
}

function utf8Length(text: string): number {
  let n = 0;
  for (const char of text) {
    const c = char.codePointAt(0)!;
    n += c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
  }
  return n;
}

const describe = (value: unknown) => (typeof value === "string" ? JSON.stringify(value) : String(value));

export function isInteger(value: unknown, min: number, max: number): value is number {
  return typeof value === "number" && Number.isInteger(value) && value >= min && value <= max;
}

/** A header GPIO of this board. */
export function gpio(board: Board, pin: unknown, what = "pin"): number {
  if (!(boards[board].gpios as readonly number[]).includes(pin as number)) {
    invalid(
      `${what} ${describe(pin)} is not a GPIO of the ${boards[board].name} (GPIO numbers 0–22 and 26–28, not physical pin numbers)`,
    );
  }
  return pin as number;
}

/** A GPIO or the onboard LED. */
export function digitalPin(board: Board, pin: unknown): number | "LED" {
  return pin === onboardLed ? onboardLed : gpio(board, pin);
}

export function adcPin(board: Board, pin: unknown): 26 | 27 | 28 {
  if (!(boards[board].adcPins as readonly number[]).includes(pin as number)) {
    invalid(
      `pin ${describe(pin)} cannot read analog values: the ADC pins are GP26, GP27 and GP28 (0–${adc.maxVolts} V)`,
    );
  }
  return pin as 26 | 27 | 28;
}

export function bit(value: unknown, what = "value"): 0 | 1 {
  if (value === true || value === 1) return 1;
  if (value === false || value === 0) return 0;
  return invalid(`${what} must be 0, 1, true or false (got ${describe(value)})`);
}

export function oneOf<T extends string>(value: unknown, allowed: readonly T[], what: string): T {
  if (!allowed.includes(value as T))
    invalid(`${what} must be one of ${allowed.join(", ")} (got ${describe(value)})`);
  return value as T;
}

export function bus(value: unknown, what = "bus"): 0 | 1 {
  if (value !== 0 && value !== 1) invalid(`${what} must be 0 or 1 (got ${describe(value)})`);
  return value;
}

export function bytes(value: unknown, what = "data"): number[] {
  const list =
    typeof value === "string" ? utf8Bytes(value) : value instanceof Uint8Array ? [...value] : value;
  if (!Array.isArray(list)) invalid(`${what} must be an array of bytes, a Uint8Array or a string`);
  if (list.length > maxBytesPerMessage)
    invalid(`${what} has ${list.length} bytes; at most ${maxBytesPerMessage} fit in one message`);
  for (const [i, b] of list.entries()) {
    if (!isInteger(b, 0, 255)) invalid(`${what}[${i}] must be a byte 0–255 (got ${describe(b)})`);
  }
  return list as number[];
}

export function pwm(frequency: unknown, duty: unknown): void {
  if (
    typeof frequency !== "number" ||
    !(frequency >= pwmLimits.minFrequency && frequency <= pwmLimits.maxFrequency)
  ) {
    invalid(
      `frequency must be ${pwmLimits.minFrequency}–${pwmLimits.maxFrequency} Hz (got ${describe(frequency)})`,
    );
  }
  if (typeof duty !== "number" || !(duty >= 0 && duty <= 1))
    invalid(`duty must be 0–1 (got ${describe(duty)})`);
}

export function i2cAddress(address: unknown): number {
  if (!isInteger(address, i2cAddressRange.min, i2cAddressRange.max)) {
    invalid(
      `I2C address must be 0x08–0x77 (got ${typeof address === "number" ? `0x${address.toString(16)}` : describe(address)})`,
    );
  }
  return address as number;
}

/** A pin that can serve `role` on `bus` of this peripheral, per the board's pin table. */
export function busPin(
  board: Board,
  peripheral: "i2c" | "spi" | "uart",
  busId: 0 | 1,
  role: string,
  pin: unknown,
): number {
  gpio(board, pin, `${role} pin`);
  const table = boards[board][peripheral][busId] as Record<string, readonly number[]>;
  const options = table[role] ?? [];
  if (!options.includes(pin as number)) {
    invalid(
      `GP${pin} cannot be ${peripheral.toUpperCase()}${busId} ${role.toUpperCase()}; use one of ${options.map((p) => `GP${p}`).join(", ")}`,
    );
  }
  return pin as number;
}

export function baud(value: unknown): number {
  if (!(uartBauds as readonly number[]).includes(value as number)) {
    invalid(`baud must be a standard rate (${uartBauds.join(", ")}; got ${describe(value)})`);
  }
  return value as number;
}

export function pixels(value: unknown): [number, number, number][] {
  if (!Array.isArray(value) || value.length === 0 || value.length > 1024)
    invalid("pixels must be an array of 1–1024 [r, g, b] triples");
  for (const [i, p] of value.entries()) {
    if (!Array.isArray(p) || p.length !== 3 || !p.every((c) => isInteger(c, 0, 255))) {
      invalid(`pixels[${i}] must be [r, g, b] with each value 0–255 (got ${JSON.stringify(p)})`);
    }
  }
  return value as [number, number, number][];
}

/** A message for the device must serialise to less than 64 KB. */
export function messageSize(json: string, what = "message"): void {
  const size = utf8Length(json);
  if (size >= maxFrameBytes - 256) invalid(`${what} is ${size} bytes; a device message must be below 64 KB`);
}

export function entityId(value: unknown): string {
  if (typeof value !== "string" || !/^[A-Za-z0-9_.-]{1,64}$/.test(value)) {
    invalid(`entity_id must be 1–64 letters, digits, _ . or - (got ${describe(value)})`);
  }
  return value;
}

/** JSON text of a state value (at most 8 KB). */
export function stateValue(value: unknown): string {
  let json: string | undefined;
  try {
    json = JSON.stringify(value ?? null);
  } catch {
    invalid("a state value must be JSON-serialisable");
  }
  if (json === undefined) invalid("a state value must be JSON-serialisable");
  if (utf8Length(json) > 8192) invalid("a state value must be at most 8 KB of JSON");
  return json;
}
