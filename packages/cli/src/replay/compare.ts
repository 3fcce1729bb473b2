import type { RecordingEntry } from "@sdk/protocol";
import type { RecordedOutput, ScriptError } from "./engine.ts";

/** One step of the alignment of the recorded outputs with the new ones. */
export type Step =
  | { op: "same"; recorded: RecordedOutput; now: RecordedOutput }
  /** `instead`: the replay did this (the `added` step right after) in its place. */
  | { op: "removed"; recorded: RecordedOutput; instead?: RecordedOutput }
  | { op: "added"; now: RecordedOutput }
  /** The same entity got another value. */
  | { op: "changed"; recorded: RecordedOutput & { kind: "state" }; now: RecordedOutput & { kind: "state" } };

const isOutput = (entry: RecordingEntry): entry is RecordedOutput =>
  entry.kind === "command" || entry.kind === "state" || entry.kind === "send";

/** JSON with object keys sorted: equal values give equal text. */
export function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const keys = Object.keys(value).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/** What is compared: kind, name and arguments or value. Timing and command answers are not. */
function keyOf(entry: RecordedOutput): string {
  if (entry.kind === "command") return `command ${entry.command} ${canonical(entry.args)}`;
  if (entry.kind === "state") return `state ${entry.entityId} ${canonical(entry.value)}`;
  return `send ${canonical(entry.message)}`;
}

/** Past this many cells the middle parts are compared entry by entry, in order, without a search. */
const maxCells = 2_000_000;

const kinds = ["command", "state", "send"] as const;

/** When a step happened: now, or when it was recorded for what the script no longer does. */
export const timeOf = (step: Step) =>
  step.op === "removed" ? (step.instead ?? step.recorded).t : step.now.t;

/** Each output with the number of inputs before it: which connect, message or disconnect it followed. */
function causes(entries: RecordingEntry[]): {
  outputs: RecordedOutput[];
  after: Map<RecordedOutput, number>;
} {
  const after = new Map<RecordedOutput, number>();
  let inputs = 0;
  for (const entry of entries) {
    if (isOutput(entry)) after.set(entry, inputs);
    else if (entry.kind !== "log") inputs++;
  }
  return { outputs: [...after.keys()], after };
}

type Closeness = (recorded: RecordedOutput, now: RecordedOutput) => number;

/**
 * Lines up what the script did with what it did when recorded: commands with commands, states with
 * states, sends with sends, each in order (a recording has a command at the time of its answer, so
 * a state emitted while it was on its way comes first there and after it in the replay); then all
 * of it by time. Of the ways to line up equal entries, the diff takes the one that keeps them with
 * the input they followed and near their recorded times ("the first reading now switches the fan
 * on", not "the first reading now does what the second one did").
 */
export function align(recordedEntries: RecordingEntry[], nowEntries: RecordingEntry[]): Step[] {
  const recorded = causes(recordedEntries);
  const now = causes(nowEntries);
  const closeness: Closeness = (r, w) =>
    (recorded.after.get(r) === now.after.get(w) ? 1 : 0.3) / (1 + ((r.t - w.t) / 250) ** 2);
  const steps = kinds.flatMap((kind) =>
    alignSequence(
      recorded.outputs.filter((e) => e.kind === kind),
      now.outputs.filter((e) => e.kind === kind),
      closeness,
    ),
  );
  return steps
    .map((step, i) => ({ step, i }))
    .sort((x, y) => timeOf(x.step) - timeOf(y.step) || x.i - y.i)
    .map((x) => x.step);
}

/** What an entry is about: the command, the entity, the message type. */
function nameOf(entry: RecordedOutput): string {
  if (entry.kind === "command") return entry.command;
  if (entry.kind === "state") return entry.entityId;
  return String(entry.message.type ?? "");
}

/**
 * Aligns two sequences of one kind: equal entries matched in order, the most and closest in time;
 * an entry that took another value (the same command, entity or message type) is a change, worth
 * half a match.
 */
function alignSequence(recorded: RecordedOutput[], now: RecordedOutput[], closeness: Closeness): Step[] {
  const a = recorded.map(keyOf);
  const b = now.map(keyOf);
  // Equal, after the same input and within 250 ms: nothing could line up better.
  const near = (i: number, j: number) => a[i] === b[j] && closeness(recorded[i]!, now[j]!) >= 0.5;
  let start = 0;
  while (start < a.length && start < b.length && near(start, start)) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && near(endA - 1, endB - 1)) {
    endA--;
    endB--;
  }
  const steps: Step[] = [];
  for (let i = 0; i < start; i++) steps.push({ op: "same", recorded: recorded[i]!, now: now[i]! });
  const n = endA - start;
  const m = endB - start;
  if (n * m > maxCells) {
    // Too long to search: entry by entry, in order.
    for (let k = 0; k < Math.max(n, m); k++) {
      const r = recorded[start + k];
      const w = now[start + k];
      if (r && w && a[start + k] === b[start + k]) steps.push({ op: "same", recorded: r, now: w });
      else if (r && w && r.kind === "state" && w.kind === "state" && r.entityId === w.entityId)
        steps.push({ op: "changed", recorded: r, now: w });
      else {
        if (r) steps.push({ op: "removed", recorded: r, instead: w });
        if (w) steps.push({ op: "added", now: w });
      }
    }
  } else {
    // score[i][j]: the best alignment of the rest, recorded[start+i..endA) with now[start+j..endB).
    const width = m + 1;
    const score = new Float64Array((n + 1) * width);
    const pair = (i: number, j: number) => {
      const r = recorded[start + i]!;
      const w = now[start + j]!;
      const worth =
        a[start + i] === b[start + j] ? 1 : nameOf(r) === nameOf(w) && r.kind === w.kind ? 0.5 : 0;
      return worth === 0 ? -1 : score[(i + 1) * width + j + 1]! + worth * closeness(r, w);
    };
    for (let i = n - 1; i >= 0; i--) {
      for (let j = m - 1; j >= 0; j--) {
        score[i * width + j] = Math.max(pair(i, j), score[(i + 1) * width + j]!, score[i * width + j + 1]!);
      }
    }
    let i = 0;
    let j = 0;
    while (i < n || j < m) {
      const here = score[i * width + j]!;
      const r = recorded[start + i];
      const w = now[start + j];
      if (r && w && pair(i, j) === here) {
        if (a[start + i] === b[start + j]) steps.push({ op: "same", recorded: r, now: w });
        else if (r.kind === "state" && w.kind === "state") steps.push({ op: "changed", recorded: r, now: w });
        else steps.push({ op: "removed", recorded: r, instead: w }, { op: "added", now: w });
        i++;
        j++;
      } else if (r && (!w || score[(i + 1) * width + j]! === here)) {
        steps.push({ op: "removed", recorded: r });
        i++;
      } else {
        steps.push({ op: "added", now: w! });
        j++;
      }
    }
  }
  for (let i = endA, j = endB; i < a.length; i++, j++)
    steps.push({ op: "same", recorded: recorded[i]!, now: now[j]! });
  return steps;
}

/** The first line of an error: stacks move when the script changes; the message does not. */
const headline = (message: string) => message.split("\n")[0]!.trim();

/** Script errors of the replay that the recording did not have (matched by their first line). */
export function newErrors(recorded: RecordingEntry[], errors: ScriptError[]): ScriptError[] {
  const expected = recorded
    .filter((e) => e.kind === "log" && e.level === "error")
    .map((e) => headline((e as { message: string }).message));
  return errors.filter((error) => {
    const at = expected.indexOf(headline(error.message));
    if (at === -1) return true;
    expected.splice(at, 1);
    return false;
  });
}
