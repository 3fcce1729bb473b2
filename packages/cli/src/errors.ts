/** Exit codes: 0 ok, 1 failure, 2 usage error. */
export const exitCodes = { ok: 0, failure: 1, usage: 2 } as const;

/** A mistake in how the command was called: printed with a hint to `--help`, exit 2. */
export class UsageError extends Error {
  readonly command: string | undefined;

  constructor(message: string, command?: string) {
    super(message);
    this.name = "UsageError";
    this.command = command;
  }
}

/**
 * Another error's message to follow a colon in a message of ours: trimmed, without its closing
 * full stop. Never wrap one in brackets: messages carry their own, and brackets would nest.
 */
export function reasonOf(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).trim().replace(/\.$/, "");
}

/** A failure to report plainly (no stack), exit 1. */
export class CliError extends Error {
  readonly code?: string;
  readonly docs?: string;

  constructor(message: string, extra: { code?: string; docs?: string } = {}) {
    super(message);
    this.name = "CliError";
    this.code = extra.code;
    this.docs = extra.docs;
  }
}
