import { align, newErrors, type Step } from "./compare.ts";
import { type ReplayRun, replay, type Script, type ScriptError } from "./engine.ts";
import { isInput, type Recording, serializeRecording } from "./recording-file.ts";

/** One recording replayed and compared. */
export interface RecordingCheck {
  recording: Recording;
  run: ReplayRun;
  steps: Step[];
  /** Commands, states and sends that differ (a changed state counts once). */
  differences: number;
  /** Script errors the recording did not have. */
  errors: ScriptError[];
  ok: boolean;
}

export async function checkRecording(
  recording: Recording,
  script: Script,
  options: { fireBudget?: number } = {},
): Promise<RecordingCheck> {
  const run = await replay(recording, script, options);
  const steps = align(recording.entries, run.timeline);
  const differences = steps.filter((s) => s.op !== "same").length;
  const errors = newErrors(recording.entries, run.errors);
  const ok = run.fatal === null && differences === 0 && errors.length === 0 && run.unanswered.length === 0;
  return { recording, run, steps, differences, errors, ok };
}

/**
 * The recording with the new behaviour accepted: the same header and inputs, and the commands
 * (with the answers the replay gave them), states, sends and log lines of the replay.
 */
export function acceptedText(check: RecordingCheck): string {
  return serializeRecording(check.recording.header, check.run.timeline);
}

/** What the replay did, counted: inputs fed and outputs made. */
export function counts(check: RecordingCheck) {
  const now = check.run.timeline;
  return {
    inputs: now.filter(isInput).length,
    commands: now.filter((e) => e.kind === "command").length,
    states: now.filter((e) => e.kind === "state").length,
    sends: now.filter((e) => e.kind === "send").length,
  };
}
