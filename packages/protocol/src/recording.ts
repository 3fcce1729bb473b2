import { z } from "zod";
import { Board, LogLevel } from "./fields.ts";
import { CommandOutcomeRecord } from "./watch.ts";

/**
 * A recorded device session (`sdk record`, `sdk dev --record`, replayed by `sdk test`): JSON Lines,
 * a header line, then one line per entry in the order they happened. `t` is milliseconds since the
 * recording started. docs/scripts.md describes the format with an example.
 */
export const recordingFormat = "sdk-recording" as const;
export const recordingVersion = 1;
/** Where `sdk test` looks for recordings, relative to the project directory. */
export const recordingsDir = "test/recordings";

export const RecordingHeader = z.object({
  format: z.literal(recordingFormat),
  version: z.literal(recordingVersion),
  device: z.object({ id: z.string(), name: z.string(), board: Board, firmware: z.string() }),
  projectId: z.string(),
  recordedAt: z.string(),
  /** The deployment that ran while it was recorded (its version), when known. */
  deploymentVersion: z.number().int().nullable(),
});
export type RecordingHeader = z.infer<typeof RecordingHeader>;

/** The longest a recording may run: `t` is at most 31 days (in ms), so a replay always ends. */
const maxRecordingT = 31 * 24 * 60 * 60 * 1000;

const at = { t: z.number().min(0).max(maxRecordingT) };

/** Inputs: what the device did. `sdk test` feeds them to the script at `t` on a virtual clock. */
export const RecordedConnect = z.object({
  ...at,
  kind: z.literal("connect"),
  board: Board,
  firmware: z.string(),
});
export const RecordedMessage = z.object({
  ...at,
  kind: z.literal("message"),
  message: z.object({ type: z.string() }).catchall(z.unknown()),
});
export const RecordedDisconnect = z.object({ ...at, kind: z.literal("disconnect"), reason: z.string() });
/**
 * What the script did. Commands are answered from the recording (a command gets the first unused
 * recorded answer of its type with the same arguments, else the n-th recorded answer of its type);
 * commands and states are what `sdk test` compares.
 */
export const RecordedCommand = z.object({
  ...at,
  kind: z.literal("command"),
  command: z.string(),
  args: z.record(z.string(), z.unknown()),
  result: CommandOutcomeRecord,
});
export const RecordedState = z.object({
  ...at,
  kind: z.literal("state"),
  entityId: z.string(),
  value: z.unknown(),
});
export const RecordedSend = z.object({
  ...at,
  kind: z.literal("send"),
  message: z.record(z.string(), z.unknown()),
});
/** The script's log lines: kept for reading, not compared. */
export const RecordedLog = z.object({ ...at, kind: z.literal("log"), level: LogLevel, message: z.string() });

export const RecordingEntry = z.discriminatedUnion("kind", [
  RecordedConnect,
  RecordedMessage,
  RecordedDisconnect,
  RecordedCommand,
  RecordedState,
  RecordedSend,
  RecordedLog,
]);
export type RecordingEntry = z.infer<typeof RecordingEntry>;
