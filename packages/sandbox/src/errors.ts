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
