/** The exact text logged when a handler, timer or promise job runs past its deadline. */
export const scriptTimeoutMessage = "Script execution timeout";

/** The bundle failed to load (a syntax error, an exception at top level, a wrong default export). */
export class ScriptLoadError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ScriptLoadError";
  }
}

/** An error thrown inside the guest, copied out of QuickJS. */
export interface GuestError {
  name?: string;
  message?: string;
  stack?: string;
}

/** The interrupt handler stopped the guest: it ran past its deadline. */
export const isInterrupt = (e: GuestError | null) =>
  e?.name === "InternalError" && e.message === "interrupted";

/** An allocation failed inside the guest. */
export const isOutOfMemory = (e: GuestError | null) =>
  e?.name === "InternalError" && e.message === "out of memory";

/** QuickJS ran out of stack (its own check, before the host's stack runs out). */
export const isStackOverflow = (e: GuestError | null) =>
  e?.name === "InternalError" && e.message === "stack overflow";

/** The host's own stack ran out inside the wasm: the guest cannot be trusted to continue. */
export const isHostStackOverflow = (error: unknown) =>
  error instanceof RangeError && /call stack size/i.test(error.message);

/** What is said when the host's stack ran out before QuickJS noticed (no guest position is known). */
export const hostStackOverflowMessage = "InternalError: stack overflow (the script recursed too deeply)";

/** Keeps a stack readable after deep recursion: runs of one repeated line become one line and a count. */
export function collapseRepeats(stack: string): string {
  const out: string[] = [];
  let last: string | undefined;
  let repeats = 0;
  const flush = () => {
    if (repeats > 0) out.push(`    … the line above ${repeats} more time${repeats === 1 ? "" : "s"}`);
    repeats = 0;
  };
  for (const line of stack.split("\n")) {
    if (line === last) {
      repeats++;
      continue;
    }
    flush();
    out.push(line);
    last = line;
  }
  flush();
  return out.join("\n");
}
