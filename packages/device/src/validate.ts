import {
  type Board,
  checkCommand,
  customTypePattern,
  entityIdPattern,
  jsonValueProblem,
  maxFrameBytes,
  stateLimits,
} from "@sdk/protocol/hardware";
import { invalid } from "./errors.ts";

// The library's own argument rules: what it converts before a command is built (true/false
// levels, strings and Uint8Arrays as bytes), frame sizes, and the non-command calls. The command
// arguments themselves are checked by the protocol's `checkCommand`, as the server and devices do.

/** UTF-8 bytes of a string (QuickJS has no TextEncoder). */
function utf8Bytes(text: string): number[] {
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

/** Throws `invalid_argument` unless the command's arguments are valid for this board. */
export function command(board: Board, type: string, args: Record<string, unknown>): void {
  const problem = checkCommand(board, type, args);
  if (problem) invalid(problem);
}

/** A level to write: 0/1, or true/false. */
export function level(value: unknown, what = "value"): 0 | 1 {
  if (value === true || value === 1) return 1;
  if (value === false || value === 0) return 0;
  if (value === undefined) return invalid(`${what} is required`);
  return invalid(`${what} must be 0, 1, true or false (got ${describe(value)})`);
}

/** Byte data as the protocol's array of numbers: strings are sent as UTF-8. */
export function bytes(value: unknown, what = "data"): unknown[] {
  const list =
    typeof value === "string" ? utf8Bytes(value) : value instanceof Uint8Array ? [...value] : value;
  if (!Array.isArray(list)) invalid(`${what} must be an array of bytes, a Uint8Array or a string`);
  return list;
}

/** A message for the device must serialise to less than 64 KB. */
export function messageSize(json: string, what = "message"): void {
  const size = utf8Length(json);
  if (size >= maxFrameBytes - 256) invalid(`${what} is ${size} bytes; a device message must be below 64 KB`);
}

/** A raw message's type: lower_snake_case. */
export function messageType(message: unknown): void {
  const type = (message as { type?: unknown } | null)?.type;
  if (typeof message !== "object" || typeof type !== "string" || !customTypePattern.test(type)) {
    invalid("a message must be an object whose type is lower_snake_case");
  }
}

export function entityId(value: unknown): string {
  if (typeof value !== "string" || !entityIdPattern.test(value)) {
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
  const problem = jsonValueProblem(value ?? null);
  if (problem) invalid(`a state value must be plain JSON data: ${problem}`);
  if (utf8Length(json) > stateLimits.valueMaxBytes) invalid("a state value must be at most 8 KB of JSON");
  return json;
}
