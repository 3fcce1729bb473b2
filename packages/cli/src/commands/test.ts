import fs from "node:fs/promises";
import path from "node:path";
import { envVarNamePattern, recordingsDir } from "@sdk/protocol";
import type { Command } from "../command.ts";
import type { Globals } from "../context.ts";
import { UsageError } from "../errors.ts";
import type { Output } from "../output.ts";
import { acceptedText, checkRecording, counts, type RecordingCheck } from "../replay/check.ts";
import { diffLines, seconds } from "../replay/format.ts";
import { isInput, parseRecording, type Recording, RecordingFileError } from "../replay/recording-file.ts";
import { runBuild } from "./build.ts";

/** Diff lines shown per recording. */
const maxLines = 60;

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

/** The recordings to replay: the files named, else every `test/recordings/*.jsonl`. */
async function recordingFiles(g: Globals, args: string[]): Promise<string[]> {
  if (args.length > 0) return args.map((file) => path.resolve(file));
  const dir = path.join(g.dir, recordingsDir);
  const names = await fs.readdir(dir).catch(() => [] as string[]);
  const files = names.filter((n) => n.endsWith(".jsonl")).sort();
  if (files.length === 0)
    throw new UsageError(
      `No recordings in ${path.relative(process.cwd(), dir) || dir}: record one with sdk record --device dev_… ${recordingsDir}/NAME.jsonl (or sdk dev --record)`,
      "test",
    );
  return files.map((n) => path.join(dir, n));
}

/** `NAME=value` lines (blank lines and `#` comments skipped): what `this.env` holds in the replay. */
async function readEnvFile(file: string): Promise<Record<string, string>> {
  const text = await fs.readFile(file, "utf8").catch((error: NodeJS.ErrnoException) => {
    throw new UsageError(`Cannot read --env-file ${file}: ${error.code ?? error.message}`, "test");
  });
  const env: Record<string, string> = {};
  for (const [i, raw] of text.split("\n").entries()) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    const at = line.indexOf("=");
    const name = line.slice(0, at).trim();
    if (at < 1 || !envVarNamePattern.test(name))
      throw new UsageError(`${file}:${i + 1}: expected NAME=value with NAME like THRESHOLD_C`, "test");
    env[name] = line.slice(at + 1);
  }
  return env;
}

async function readRecording(out: Output, file: string, shown: string): Promise<Recording> {
  let text: string;
  try {
    text = await fs.readFile(file, "utf8");
  } catch (error) {
    throw new UsageError(`Cannot read ${shown}: ${(error as NodeJS.ErrnoException).code ?? error}`, "test");
  }
  try {
    const recording = parseRecording(shown, text);
    if (recording.dropped) out.warn(recording.dropped);
    return recording;
  } catch (error) {
    if (error instanceof RecordingFileError)
      throw new UsageError(`Not a recording: ${error.message}`, "test");
    throw error;
  }
}

/** Writes a temporary file beside FILE and renames it over FILE: never a half-written recording. */
async function writeAtomically(file: string, text: string): Promise<void> {
  const temp = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.tmp`);
  try {
    await fs.writeFile(temp, text);
    await fs.rename(temp, file);
  } catch (error) {
    await fs.rm(temp, { force: true });
    throw error;
  }
}

function report(g: Globals, check: RecordingCheck, name: string, updated: boolean): void {
  const { out } = g;
  const c = counts(check);
  const tally = `${plural(c.inputs, "input")}, ${plural(c.commands, "command")}, ${plural(c.states, "state")}, ${plural(c.sends, "send")}`;
  if (check.ok) {
    out.line(`${out.green("✔")} ${name} ${out.dim(`(${tally})`)}`);
    return;
  }
  const problems = [
    check.differences > 0 ? plural(check.differences, "difference") : null,
    check.errors.length > 0 ? plural(check.errors.length, "script error") : null,
    check.run.unanswered.length > 0 ? `${plural(check.run.unanswered.length, "command")} not recorded` : null,
  ].filter(Boolean);
  const mark = updated ? out.yellow("↻") : out.red("✖");
  const what = check.run.fatal ?? problems.join(", ");
  out.line(`${mark} ${name} ${out.dim(`(${tally})`)}: ${what}${updated ? " — accepted" : ""}`);
  const paint = {
    " ": out.dim,
    "-": out.red,
    "+": out.green,
    "~": out.yellow,
    "…": out.dim,
    "@": out.cyan,
  } as const;
  // --json has every difference in its result: no diff lines to build.
  const { lines, total } = out.json
    ? { lines: [], total: 0 }
    : diffLines(check.steps, check.recording.entries.filter(isInput), { max: maxLines });
  for (const line of lines) out.line(`    ${paint[line.sign](`${line.sign} ${line.text}`.trimEnd())}`);
  if (total > maxLines)
    out.line(`    ${out.dim(`… ${total - maxLines} more lines (sdk test --json has every difference)`)}`);
  for (const error of check.errors) {
    const [first, ...stack] = error.message.split("\n");
    out.line(`    ${out.red(`! script ${error.kind} at ${seconds(error.t)}: ${first}`)}`);
    for (const frame of stack.slice(0, 3)) out.line(`      ${out.dim(frame.trim())}`);
  }
  for (const command of check.run.unanswered)
    out.line(
      `    ${out.yellow(`? command ${command.command} at ${seconds(command.t)} failed with not_recorded: ${command.result.ok ? "" : command.result.message}`)}`,
    );
}

export const test: Command = {
  name: "test",
  summary: "Replay the recordings in test/recordings against the script; show where it diverges",
  usage: "sdk test [FILE.jsonl …] [--update] [--env-file <file>] [--dir <project>] [--json]",
  details: [
    "Builds the project and replays each recorded device session (sdk record, sdk dev --record) in a local sandbox: no server, no board, no network. The recorded events reach the script at their recorded times on a virtual clock (its timers run in order without waiting; Date.now() and new Date() read the recording's start plus the virtual clock, and Math.random() is seeded from the recording, so a replay gives the same values every run); its commands get the recorded answers (the first unused answer of the same type and arguments, else the n-th answer of the type for its n-th command; one without an answer fails with not_recorded). The commands, states and sends it makes are compared in order with the recorded ones (kind, name, arguments or value; not timing) and the differences shown as a diff.",
    "Exit codes: 0 every recording matches (or --update accepted the differences), 1 a difference, a script error or a build failure, 2 wrong usage or a file that is not a recording.",
  ].join("\n\n"),
  options: { update: { type: "boolean" }, "env-file": { type: "string" } },
  optionHelp: [
    "--env-file <file>   env vars for the script (this.env.NAME), one NAME=value a line; none without it",
    "--update            accept the new behaviour: rewrite the diverging recordings' commands, states, sends and logs (header, inputs and recorded answers are kept)",
  ],
  json: true,
  async run({ args, values, g }) {
    const update = Boolean(values.update);
    const env = values["env-file"] === undefined ? {} : await readEnvFile(values["env-file"] as string);
    const files = await recordingFiles(g, args);
    const shown = (file: string) => path.relative(process.cwd(), file) || file;
    const recordings: Recording[] = [];
    for (const file of files) recordings.push(await readRecording(g.out, file, shown(file)));

    const built = await runBuild(g);
    if (!built.ok) {
      g.out.result({ ok: false, stage: "build", diagnostics: built.diagnostics });
      return 1;
    }
    const results = [];
    let failed = 0;
    let accepted = 0;
    for (const [i, recording] of recordings.entries()) {
      const check = await checkRecording(recording, {
        bundle: built.bundle,
        sourceMap: built.sourceMap,
        env,
      });
      const canUpdate = update && !check.ok && check.run.fatal === null;
      if (canUpdate) {
        await writeAtomically(files[i]!, acceptedText(check));
        accepted++;
      } else if (!check.ok) failed++;
      report(g, check, recording.file, canUpdate);
      if (canUpdate && check.run.unanswered.length > 0)
        g.out.line(
          `    ${g.out.yellow(`${plural(check.run.unanswered.length, "command")} had no recorded answer: saved as failing with not_recorded, and will keep failing so in the replay. Record a new session to get the device's answers.`)}`,
        );
      results.push({
        file: recording.file,
        ok: check.ok,
        updated: canUpdate,
        ...counts(check),
        differences: check.steps
          .filter((s) => s.op !== "same")
          .map((s) => ({
            op: s.op,
            recorded: "recorded" in s ? s.recorded : undefined,
            now: "now" in s ? s.now : undefined,
          })),
        errors: check.errors,
        unanswered: check.run.unanswered,
        fatal: check.run.fatal,
      });
    }
    g.out.result({ ok: failed === 0, recordings: results });
    const passed = recordings.length - failed - accepted;
    g.out.line();
    g.out.line(
      [
        `${plural(recordings.length, "recording")}: ${passed} passed`,
        failed > 0 ? g.out.red(`${failed} failed`) : null,
        accepted > 0 ? g.out.yellow(`${accepted} updated`) : null,
      ]
        .filter(Boolean)
        .join(", "),
    );
    if (failed > 0 && !update)
      g.out.line(`If the new behaviour is right, accept it with: ${g.out.cyan("sdk test --update")}`);
    return failed > 0 ? 1 : 0;
  },
};
