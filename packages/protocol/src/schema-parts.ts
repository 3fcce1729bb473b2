import { z } from "zod";

// Pieces the schemas share that are not part of @sdk/protocol's public exports.

export const Timestamp = z.string().describe("ISO 8601 date-time in UTC");

export const utf8 = new TextEncoder();

// The rules for names people give things (projects, devices, API tokens, entities).
const bidiControls = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/u;
const controls = /[\p{Cc}\u2028\u2029]/u;
const invisible = /[\p{Default_Ignorable_Code_Point}\p{White_Space}]/gu;

/** What is wrong with a name (already NFC-normalised and trimmed), or null. */
function nameProblem(name: string, maxLength: number): string | null {
  if (controls.test(name)) return "must not contain control characters (tabs, line breaks, NUL, …)";
  if (bidiControls.test(name))
    return "must not contain bidirectional controls (U+202E and similar): they make text display in a different order than it is stored";
  if (name.replace(invisible, "") === "")
    return "must not be empty or made only of spaces and invisible characters";
  if ([...name].length > maxLength) return `must be at most ${maxLength} characters`;
  return null;
}

/**
 * A display name: well-formed Unicode, NFC-normalised and trimmed, printable (no control or
 * bidirectional control characters), not blank once invisible characters are removed.
 */
export const Name = (maxLength = 100) =>
  z
    .string()
    .refine((value) => !/\p{Cs}/u.test(value), {
      error: "must be valid Unicode text (it has a lone surrogate, like \\ud800)",
      abort: true,
    })
    .overwrite((value) => value.normalize("NFC").trim())
    .superRefine((value, ctx) => {
      const problem = nameProblem(value, maxLength);
      if (problem) ctx.addIssue({ code: "custom", message: problem, input: value });
    });

/** No NUL: the value reaches C strings (firmware) and shells, where NUL ends the text. */
export const noNul = (value: string) => !value.includes("\u0000");
export const noNulMessage =
  "must not contain the NUL character (U+0000): C programs and shells end text there";
