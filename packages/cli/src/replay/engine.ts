import type { CommandOutcomeRecord, LogLevel, RecordingEntry } from "@sdk/protocol";
import { ProjectSandbox, type SandboxHost, ScriptLoadError, scriptTimeoutMessage } from "@sdk/sandbox";
import { FireBudgetError, VirtualClock } from "./clock.ts";
import { canonical } from "./compare.ts";
import { isInput, type Recording } from "./recording-file.ts";

/** How long after the recording's last entry the script's timers still run. */
const graceMs = 50;

type Entry<K extends RecordingEntry["kind"]> = Extract<RecordingEntry, { kind: K }>;
export type RecordedOutput = Entry<"command"> | Entry<"state"> | Entry<"send">;

/** An error line of the replay: an uncaught error, a timeout, or the script's own console.error. */
export interface ScriptError {
  t: number;
  kind: "error" | "timeout";
  message: string;
}

export interface ReplayRun {
  /** The recorded inputs and what the script did, in the order it happened (`t` on the virtual clock). */
  timeline: RecordingEntry[];
  errors: ScriptError[];
  /** Commands the recording had no answer for: they failed with `not_recorded`. */
  unanswered: Entry<"command">[];
  /** The script failed to load, or the sandbox stopped itself. */
  fatal: string | null;
}

export interface Script {
  bundle: string;
  sourceMap?: string;
  /** The script's env vars (`this.env.NAME`); none by default. */
  env?: Record<string, string>;
}

interface Answer {
  args: string;
  result: CommandOutcomeRecord;
  used: boolean;
}

/**
 * The recorded answers of each command type. A command gets the first unused answer of its type
 * with the same arguments; failing that, the n-th answer of its type (the n-th such command), which
 * stays free for a command with its arguments. So a command the script added (another pin read)
 * does not shift the answers of the ones that follow.
 */
class Answers {
  readonly #byType = new Map<string, Answer[]>();
  readonly #calls = new Map<string, number>();

  constructor(entries: RecordingEntry[]) {
    for (const entry of entries) {
      if (entry.kind !== "command") continue;
      const list = this.#byType.get(entry.command) ?? [];
      list.push({ args: canonical(entry.args), result: entry.result, used: false });
      this.#byType.set(entry.command, list);
    }
  }

  next(type: string, args: unknown): CommandOutcomeRecord | undefined {
    const n = this.#calls.get(type) ?? 0;
    this.#calls.set(type, n + 1);
    const list = this.#byType.get(type) ?? [];
    const key = canonical(args);
    const same = list.find((a) => !a.used && a.args === key);
    if (same) {
      same.used = true;
      return same.result;
    }
    return list[n]?.result;
  }

  recorded(type: string): number {
    return this.#byType.get(type)?.length ?? 0;
  }
}

/** The recording's seed for `Math.random()` in the replay: FNV-1a of its start and device. */
function seedOf(recording: Recording): number {
  let hash = 0x811c9dc5;
  for (const c of `${recording.header.recordedAt}\0${recording.header.device.id}`) {
    hash ^= c.charCodeAt(0);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

const ordinal = (n: number) => {
  const suffix = n % 100 >= 11 && n % 100 <= 13 ? "th" : (["th", "st", "nd", "rd"][n % 10] ?? "th");
  return `${n}${suffix}`;
};

/**
 * Replays a recording against a script in the local sandbox: its inputs at their `t` on a virtual
 * clock, the script's timers in order between them and up to `graceMs` after the last entry,
 * commands answered from the recording; `Date` reads `recordedAt` plus the virtual clock and
 * `Math.random()` is seeded from the header. No server, no board.
 */
export async function replay(
  recording: Recording,
  script: Script,
  options: { fireBudget?: number } = {},
): Promise<ReplayRun> {
  const { header, entries } = recording;
  const inputs = entries.filter(isInput);
  const deviceId = header.device.id;
  const clock = new VirtualClock({ fireBudget: options.fireBudget });
  const startedAt = Number.isFinite(Date.parse(header.recordedAt)) ? Date.parse(header.recordedAt) : 0;
  const answers = new Answers(entries);
  const run: ReplayRun = { timeline: [], errors: [], unanswered: [], fatal: null };
  if (inputs.length === 0) {
    run.fatal = "the recording has no device inputs (connect, message, disconnect): nothing to replay";
    return run;
  }
  /** While the script connects a device whose recording started mid-session: nothing is compared. */
  let setup = false;
  const output = (entry: RecordingEntry) => {
    if (!setup) run.timeline.push(entry);
  };
  const host: SandboxHost = {
    command(_deviceId, type, args) {
      if (setup) return Promise.resolve(null);
      const answer = answers.next(type, args);
      const result: CommandOutcomeRecord = answer ?? {
        ok: false,
        code: "not_recorded",
        message: `the recording has no answer for a ${ordinal(answers.recorded(type) + 1)} ${type} command`,
      };
      const entry: Entry<"command"> = { t: clock.now, kind: "command", command: type, args, result };
      output(entry);
      if (!answer) run.unanswered.push(entry);
      return result.ok
        ? Promise.resolve(result.value)
        : Promise.reject({ code: result.code, message: result.message });
    },
    emitState: (_deviceId, entityId, value) => output({ t: clock.now, kind: "state", entityId, value }),
    send: (_deviceId, message) => output({ t: clock.now, kind: "send", message }),
    log(_deviceId, level: LogLevel, message) {
      output({ t: clock.now, kind: "log", level, message });
      // Uncaught errors (the runtime reports a handler's), timeouts and console.error lines.
      if (level === "error" && !setup)
        run.errors.push({
          t: clock.now,
          kind: message === scriptTimeoutMessage ? "timeout" : "error",
          message,
        });
    },
  };

  let sandbox: ProjectSandbox;
  try {
    sandbox = await ProjectSandbox.load({
      projectId: header.projectId,
      bundle: script.bundle,
      sourceMap: script.sourceMap,
      env: script.env ?? {},
      host,
      limits: { cpuBudgetMs: 0 },
      scheduler: clock,
      // The recording's time on the virtual clock, and a seed of its own: the same values every run.
      time: { now: () => startedAt + clock.now, seed: seedOf(recording) },
      onFault: (reason) => {
        run.fatal = `the sandbox stopped the script: ${reason}`;
      },
    });
  } catch (error) {
    if (!(error instanceof ScriptLoadError)) throw error;
    run.fatal = `the script failed to load: ${error.message}`;
    return run;
  }

  /** Lets what an entry started (command answers, their promise chains) finish. */
  const settle = async () => {
    for (let before = -1; before !== sandbox.entriesRun; ) {
      before = sandbox.entriesRun;
      await new Promise((resolve) => setImmediate(resolve));
    }
  };

  try {
    if (inputs[0]?.kind !== "connect") {
      // Recorded mid-session: the device was connected already; its connect is not compared.
      setup = true;
      sandbox.attach(deviceId, header.device.board);
      await settle();
      setup = false;
    }
    for (const input of inputs) {
      await clock.advanceTo(input.t, settle);
      if (sandbox.disposed) break;
      run.timeline.push(input);
      if (input.kind === "connect") sandbox.attach(deviceId, input.board);
      else if (input.kind === "message") sandbox.deliver(deviceId, input.message);
      else sandbox.detach(deviceId);
      await settle();
    }
    // The entries are in the order they happened; a loop, not a spread (too many arguments).
    let end = 0;
    for (const entry of entries) end = Math.max(end, entry.t);
    if (!sandbox.disposed) await clock.advanceTo(end + graceMs, settle);
  } catch (error) {
    if (!(error instanceof FireBudgetError)) throw error;
    run.fatal = error.message;
  } finally {
    sandbox.dispose();
  }
  return run;
}
