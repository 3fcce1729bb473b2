import { describeIssues } from "@sdk/protocol";

/** The error codes a device answers a command with (`{"type":"error","id":n,"code":...}`). */
export type CommandErrorCode = "invalid_argument" | "unsupported" | "io_error";

/** A command the device could not carry out; becomes an `error` reply with this code and message. */
export class CommandError extends Error {
  readonly code: CommandErrorCode;

  constructor(code: CommandErrorCode, message: string) {
    super(message);
    this.name = "CommandError";
    this.code = code;
  }
}

/** A command whose arguments do not fit its schema: every bad field once, in plain words. */
export function invalidArguments(
  type: string,
  issues: Parameters<typeof describeIssues>[0],
  raw: unknown,
): CommandError {
  const why = describeIssues(issues, "arguments", raw)
    .map((i) => `${i.path}: ${i.message}`)
    .join("; ");
  return new CommandError("invalid_argument", `${type}: ${why}`);
}
