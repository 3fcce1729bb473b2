import { execFileSync } from "node:child_process";

/** A tool the tests need is missing: skip locally, but never on CI (CI must run everything). */
export function unavailable(why: string): { skip: string } {
  if (process.env.CI) throw new Error(`CI must not skip: ${why}`);
  return { skip: why };
}

/** Whether a command runs (exit status 0) with these arguments. */
export function hasCommand(command: string, args: string[] = ["--version"]): boolean {
  try {
    execFileSync(command, args, { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}
