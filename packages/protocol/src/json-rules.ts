// Rules for JSON the service accepts from anyone: a device frame, a REST body, a script's state
// value. Plain data and loops, no zod and no recursion, so device scripts can use them too and a
// hostile value cannot exhaust the stack while it is being checked.

/**
 * How deep arrays and objects may nest (a device frame's own object is level 1). The firmware's
 * parser stops at the same depth (`SDK_JSON_MAX_DEPTH`).
 */
export const maxJsonDepth = 64;

export const jsonProblems = {
  tooDeep: `nests deeper than ${maxJsonDepth} levels of arrays and objects`,
  notFinite: "JSON numbers must be finite: this one is too large for a number (like 1e999) or not a number",
} as const;

/** True when JSON text nests arrays and objects deeper than `limit`; scans the text without parsing it. */
export function jsonTextTooDeep(text: string, limit: number = maxJsonDepth): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > limit) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

interface Frame {
  value: unknown;
  depth: number;
  parent: Frame | null;
  key: string;
}

function pathOf(frame: Frame): string {
  const keys: string[] = [];
  for (let f: Frame | null = frame; f?.parent; f = f.parent) keys.unshift(f.key);
  return keys.length ? keys.join(".") : "the value";
}

export interface JsonValueRules {
  limit?: number;
  /** Refuse `__proto__` keys and `constructor.prototype` (prototype poisoning): for request bodies. */
  prototypeKeys?: boolean;
}

/**
 * What is wrong with a parsed value as JSON data, or null: nesting deeper than the limit, a number
 * JSON cannot carry (`1e999` parses to Infinity and would be stored as null), or (with
 * `prototypeKeys`) a key that could change objects' prototypes. Walks with a stack, not recursion.
 */
export function jsonValueProblem(value: unknown, rules: JsonValueRules = {}): string | null {
  const limit = rules.limit ?? maxJsonDepth;
  const stack: Frame[] = [{ value, depth: 0, parent: null, key: "" }];
  while (stack.length) {
    const frame = stack.pop()!;
    const v = frame.value;
    if (typeof v === "number") {
      if (!Number.isFinite(v)) return `${pathOf(frame)}: ${jsonProblems.notFinite}`;
      continue;
    }
    if (typeof v !== "object" || v === null) continue;
    if (frame.depth + 1 > limit) return `${pathOf(frame)} ${jsonProblems.tooDeep}`;
    if (rules.prototypeKeys && !Array.isArray(v)) {
      if (Object.hasOwn(v, "__proto__")) return prototypeKeyProblem(frame, "__proto__");
      const ctor = (v as { constructor?: unknown }).constructor;
      if (
        Object.hasOwn(v, "constructor") &&
        typeof ctor === "object" &&
        ctor &&
        Object.hasOwn(ctor, "prototype")
      )
        return prototypeKeyProblem(frame, "constructor.prototype");
    }
    const entries = Array.isArray(v) ? v.map((item, i) => [String(i), item] as const) : Object.entries(v);
    for (const [key, item] of entries)
      stack.push({ value: item, depth: frame.depth + 1, parent: frame, key });
  }
  return null;
}

function prototypeKeyProblem(frame: Frame, key: string): string {
  const where = frame.parent ? ` (in ${pathOf(frame)})` : "";
  return `the key "${key}"${where} is refused: merged into another object it would change that object's prototype (prototype poisoning). Rename the key`;
}
