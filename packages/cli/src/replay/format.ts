import type { RecordingEntry } from "@sdk/protocol";
import { type Step, timeOf } from "./compare.ts";
import type { RecordedOutput } from "./engine.ts";

const identifier = /^[A-Za-z_$][\w$]*$/;

/** A value as a short, readable literal: `{pin:2,value:1}`, `"on"`, `[1,2]`. */
function literal(value: unknown, max = 120): string {
  const text = (v: unknown): string => {
    if (Array.isArray(v)) return `[${v.map(text).join(",")}]`;
    if (v !== null && typeof v === "object")
      return `{${Object.entries(v)
        .map(([k, x]) => `${identifier.test(k) ? k : JSON.stringify(k)}:${text(x)}`)
        .join(",")}}`;
    return JSON.stringify(v) ?? "undefined";
  };
  const out = text(value);
  return out.length > max ? `${out.slice(0, max - 1)}…` : out;
}

export const seconds = (t: number) => `${(t / 1000).toFixed(2)} s`;

/** "command gpio_write {pin:2,value:1}", "state temperature 21.5", "send {type:"blink"}". */
function describe(entry: RecordedOutput): string {
  if (entry.kind === "command") return `command ${entry.command} ${literal(entry.args)}`;
  if (entry.kind === "state") return `state ${entry.entityId} ${literal(entry.value)}`;
  return `send ${literal(entry.message)}`;
}

/** One line of the diff, without colour: its sign and text. */
export interface DiffLine {
  sign: " " | "-" | "+" | "~" | "…" | "@";
  text: string;
}

function lineOf(step: Step): DiffLine {
  if (step.op === "same") return { sign: " ", text: `${describe(step.now)} at ${seconds(step.now.t)}` };
  if (step.op === "removed")
    return { sign: "-", text: `${describe(step.recorded)} at ${seconds(step.recorded.t)}` };
  if (step.op === "added") return { sign: "+", text: `${describe(step.now)} at ${seconds(step.now.t)}` };
  return {
    sign: "~",
    text: `state ${step.now.entityId}: recorded ${literal(step.recorded.value)}, now ${literal(step.now.value)} at ${seconds(step.now.t)}`,
  };
}

/** "message {type:"reading",celsius:25} at 1.20 s": an input, heading the differences that follow it. */
function inputLine(input: RecordingEntry): DiffLine {
  const what =
    input.kind === "message"
      ? `message ${literal(input.message)}`
      : input.kind === "connect"
        ? `connect ${input.board} ${input.firmware}`
        : `disconnect ${literal((input as { reason: string }).reason)}`;
  return { sign: "@", text: `${what} at ${seconds(input.t)}` };
}

/** The last input at or before `t` (the inputs in time order): a binary search. */
function inputAt(inputs: RecordingEntry[], t: number): RecordingEntry | undefined {
  let lo = 0;
  let hi = inputs.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (inputs[mid]!.t <= t) lo = mid + 1;
    else hi = mid;
  }
  return inputs[lo - 1];
}

/**
 * The differences with one matching entry of context either side; "…" where matching entries are
 * left out. With the recording's `inputs`, each stretch is headed by the input it followed ("@").
 * At most `max` lines are built; `total` counts them all.
 */
export function diffLines(
  steps: Step[],
  inputs: RecordingEntry[] = [],
  { context = 1, max = Number.POSITIVE_INFINITY }: { context?: number; max?: number } = {},
): { lines: DiffLine[]; total: number } {
  const show = new Uint8Array(steps.length);
  let shown = -1; // the last index marked: each is marked once
  steps.forEach((step, i) => {
    if (step.op === "same") return;
    for (let k = Math.max(shown + 1, i - context); k <= Math.min(steps.length - 1, i + context); k++)
      show[k] = 1;
    shown = Math.max(shown, Math.min(steps.length - 1, i + context));
  });
  const lines: DiffLine[] = [];
  let total = 0;
  const add = (line: () => DiffLine) => {
    if (total++ < max) lines.push(line());
  };
  let skipped = false;
  let headed: RecordingEntry | undefined;
  steps.forEach((step, i) => {
    if (!show[i]) {
      skipped = true;
      return;
    }
    if (skipped && total > 0) add(() => ({ sign: "…", text: "" }));
    skipped = false;
    const input = inputAt(inputs, timeOf(step));
    if (input && input !== headed) add(() => inputLine(input));
    headed = input ?? headed;
    add(() => lineOf(step));
  });
  return { lines, total };
}
