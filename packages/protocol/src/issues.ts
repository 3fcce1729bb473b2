import type { z } from "zod";

// How a schema's complaints read to a person: one message per field, naming what it accepts.

const zodDefault = /^(Invalid input|Invalid option|Invalid|Too small|Too big)\b/;

const units: Record<string, string> = {
  string: " characters",
  array: " items",
  set: " items",
  file: " bytes",
};

/** One issue as plain words ("must be one of 0, 1 (got -1)"), keeping messages a schema wrote itself. */
export function issueMessage(issue: z.core.$ZodIssue): string {
  if (!zodDefault.test(issue.message)) return issue.message;
  const got = "input" in issue && issue.input !== undefined ? ` (got ${shown(issue.input)})` : "";
  switch (issue.code) {
    case "invalid_type":
      // Zod leaves `input` out of issues unless asked; its message still says what it received.
      if (/received undefined$/.test(issue.message)) return "is required";
      return `must be ${/^[aeiou]/.test(issue.expected) ? "an" : "a"} ${issue.expected}${got}`;
    case "invalid_value":
      return `must be one of ${issue.values.map(shown).join(", ")}${got}`;
    case "too_small":
      return `must be at least ${String(issue.minimum)}${units[issue.origin] ?? ""}${got}`;
    case "too_big":
      return `must be at most ${String(issue.maximum)}${units[issue.origin] ?? ""}${got}`;
    case "invalid_format":
      return `must be a valid ${issue.format}`;
    case "not_multiple_of":
      return `must be a multiple of ${String(issue.divisor)}${got}`;
    case "unrecognized_keys":
      return `has unknown fields: ${issue.keys.join(", ")}`;
    default:
      return issue.message;
  }
}

function shown(value: unknown): string {
  const text = typeof value === "bigint" ? `${value}` : JSON.stringify(value);
  if (text === undefined) return String(value);
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}

/**
 * Every bad field once (its first problem), as `{ path, message }`; `where` names the whole value.
 * A field absent from `input` always reads "is required", whatever its schema (Zod's issues for a
 * missing enum or literal name the allowed values, and carry no input to tell the two apart).
 */
export function describeIssues(
  issues: readonly z.core.$ZodIssue[],
  where: string,
  input: unknown,
): { path: string; message: string }[] {
  const byPath = new Map<string, string>();
  for (const issue of issues) {
    const path = issue.path.length ? issue.path.map(String).join(".") : where;
    if (byPath.has(path)) continue;
    byPath.set(path, isMissing(input, issue.path) ? "is required" : issueMessage(issue));
  }
  return [...byPath].map(([path, message]) => ({ path, message }));
}

/** Whether the value at `path` is absent (the last key missing from an object or array that exists). */
function isMissing(input: unknown, path: readonly PropertyKey[]): boolean {
  if (path.length === 0) return input === undefined;
  let value = input;
  for (const key of path) {
    if (value === null || typeof value !== "object") return false;
    if (!Object.hasOwn(value, key)) return true;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value === undefined;
}
