import type { RecordingEntry } from "@sdk/protocol";
import type { RecordedOutput, ScriptError } from "./engine.ts";

/** One step of the alignment of the recorded outputs with the new ones. */
export type Step =
  | { op: "same"; recorded: RecordedOutput; now: RecordedOutput }
  | { op: "removed"; recorded: RecordedOutput }
  | { op: "added"; now: RecordedOutput }
  /** The same entity got another value. */
  | { op: "changed"; recorded: RecordedOutput & { kind: "state" }; now: RecordedOutput & { kind: "state" } };

export const isOutput = (entry: RecordingEntry): entry is RecordedOutput =>
  entry.kind === "command" || entry.kind === "state" || entry.kind === "send";

/** JSON with object keys sorted: equal values give equal text. */
function canonical(value: unknown): string {
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

/** Past this many cells the middle part is not aligned entry by entry (all removed, all added). */
const maxCells = 2_000_000;

/**
 * How much matching two equal entries is worth: near 1 when they happened at about the same time,
 * less the further apart they are, never 0. So of the ways to line up equal entries, the diff takes
 * the one that keeps them near their recorded times ("the second reading now switches the fan on",
 * not "the first reading now does what the second one did").
 */
const closeness = (a: RecordedOutput, b: RecordedOutput) => 1 / (1 + ((a.t - b.t) / 250) ** 2);

/** Aligns two output sequences: equal entries matched in order, the most and closest in time. */
export function align(recorded: RecordedOutput[], now: RecordedOutput[]): Step[] {
  const a = recorded.map(keyOf);
  const b = now.map(keyOf);
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const steps: Step[] = [];
  for (let i = 0; i < start; i++) steps.push({ op: "same", recorded: recorded[i]!, now: now[i]! });
  const n = endA - start;
  const m = endB - start;
  const middle: Step[] = [];
  if (n * m > maxCells) {
    for (let i = start; i < endA; i++) middle.push({ op: "removed", recorded: recorded[i]! });
    for (let j = start; j < endB; j++) middle.push({ op: "added", now: now[j]! });
  } else {
    // score[i][j]: the best alignment of a[start+i..endA) with b[start+j..endB).
    const width = m + 1;
    const score = new Float64Array((n + 1) * width);
    const match = (i: number, j: number) =>
      a[start + i] === b[start + j]
        ? score[(i + 1) * width + j + 1]! + closeness(recorded[start + i]!, now[start + j]!)
        : -1;
    for (let i = n - 1; i >= 0; i--) {
      for (let j = m - 1; j >= 0; j--) {
        score[i * width + j] = Math.max(match(i, j), score[(i + 1) * width + j]!, score[i * width + j + 1]!);
      }
    }
    let i = 0;
    let j = 0;
    while (i < n || j < m) {
      const here = score[i * width + j]!;
      if (i < n && j < m && match(i, j) === here) {
        middle.push({ op: "same", recorded: recorded[start + i]!, now: now[start + j]! });
        i++;
        j++;
      } else if (i < n && (j === m || score[(i + 1) * width + j]! === here)) {
        middle.push({ op: "removed", recorded: recorded[start + i]! });
        i++;
      } else {
        middle.push({ op: "added", now: now[start + j]! });
        j++;
      }
    }
  }
  steps.push(...pairStates(middle));
  for (let i = endA, j = endB; i < a.length; i++, j++)
    steps.push({ op: "same", recorded: recorded[i]!, now: now[j]! });
  return steps;
}

/**
 * Within each run of differences, a removed and an added state of the same entity (in order) are
 * one change: "state temperature: recorded 21.5, now 22".
 */
function pairStates(steps: Step[]): Step[] {
  const result: Step[] = [];
  let run: Step[] = [];
  const flush = () => {
    const removed = run.filter((s) => s.op === "removed");
    const pairs = new Map<Step, Step>();
    const taken = new Set<Step>();
    for (const add of run) {
      if (add.op !== "added" || add.now.kind !== "state") continue;
      const entityId = add.now.entityId;
      const match = removed.find(
        (r) =>
          !taken.has(r) &&
          r.op === "removed" &&
          r.recorded.kind === "state" &&
          r.recorded.entityId === entityId,
      );
      if (!match) continue;
      taken.add(match);
      pairs.set(match, add);
    }
    const removedFor = new Map([...pairs].map(([removed, added]) => [added, removed]));
    for (const step of run) {
      if (pairs.has(step)) continue;
      const removed = removedFor.get(step);
      if (removed?.op === "removed" && step.op === "added")
        result.push({
          op: "changed",
          recorded: removed.recorded as RecordedOutput & { kind: "state" },
          now: step.now as RecordedOutput & { kind: "state" },
        });
      else result.push(step);
    }
    run = [];
  };
  for (const step of steps) {
    if (step.op === "same") {
      flush();
      result.push(step);
    } else run.push(step);
  }
  flush();
  return result;
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
