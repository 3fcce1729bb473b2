import { RecordingEntry, RecordingHeader } from "@sdk/protocol";

/** A recording read from its JSON Lines file. */
export interface Recording {
  file: string;
  header: RecordingHeader;
  entries: RecordingEntry[];
  /** What was left out of the file, for a warning: its unterminated last line (a killed recorder). */
  dropped?: string;
}

/** A recording file that is not one: `line` is 1-based; `field` the first wrong field's path. */
export class RecordingFileError extends Error {
  readonly file: string;
  readonly line: number;
  readonly field: string | null;

  constructor(file: string, line: number, field: string | null, problem: string) {
    super(`${file}:${line}: ${field ? `${field}: ` : ""}${problem}`);
    this.name = "RecordingFileError";
    this.file = file;
    this.line = line;
    this.field = field;
  }
}

interface Issue {
  path: PropertyKey[];
  message: string;
}

const fieldOf = (issue: Issue) => (issue.path.length ? issue.path.map(String).join(".") : null);

/**
 * Parses a recording; blank lines are skipped. An entry line that is not JSON and has no newline
 * after it (the recorder was killed while writing it) is dropped: `dropped` says so. Throws
 * `RecordingFileError`.
 */
export function parseRecording(file: string, text: string): Recording {
  const lines = text.split("\n");
  let header: RecordingHeader | undefined;
  const entries: RecordingEntry[] = [];
  for (const [index, raw] of lines.entries()) {
    const line = raw.trim();
    if (line === "") continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      if (header && index === lines.length - 1)
        return {
          file,
          header,
          entries,
          dropped: `${file}:${index + 1}: its last line is cut off (no newline, not JSON): left out`,
        };
      throw new RecordingFileError(file, index + 1, null, `not JSON (${(error as Error).message})`);
    }
    const parsed = header ? RecordingEntry.safeParse(value) : RecordingHeader.safeParse(value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0] as Issue;
      const what = header ? "" : " (the first line is the header: format, version, device, …)";
      throw new RecordingFileError(file, index + 1, fieldOf(issue), `${issue.message}${what}`);
    }
    if (header) entries.push(parsed.data as RecordingEntry);
    else header = parsed.data as RecordingHeader;
  }
  if (!header) throw new RecordingFileError(file, 1, null, "empty: a recording starts with its header line");
  return { file, header, entries };
}

/** The file's text: the header, then one entry a line. */
export function serializeRecording(header: RecordingHeader, entries: RecordingEntry[]): string {
  return [header, ...entries].map((line) => `${JSON.stringify(line)}\n`).join("");
}

export const isInput = (entry: RecordingEntry): boolean =>
  entry.kind === "connect" || entry.kind === "message" || entry.kind === "disconnect";
