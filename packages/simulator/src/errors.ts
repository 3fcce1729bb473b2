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
