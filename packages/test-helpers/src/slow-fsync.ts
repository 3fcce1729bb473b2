import { execFileSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";

const source = fileURLToPath(new URL("./slow-fsync.c", import.meta.url));

/**
 * Builds the slow-disk shim (slow-fsync.c) into `dir` with the machine's C compiler and returns the
 * environment that preloads it into a server: its fsync and fdatasync take `delayMs` longer.
 */
export function slowFsyncEnv(dir: string, delayMs: number): Record<string, string> {
  const library = path.join(dir, "slow-fsync.so");
  try {
    execFileSync("cc", ["-shared", "-fPIC", "-O2", "-o", library, source, "-ldl"], { stdio: "pipe" });
  } catch (error) {
    const detail = (error as { stderr?: Buffer }).stderr?.toString().trim() || (error as Error).message;
    throw new Error(`--fsync-delay-ms needs a C compiler (cc) to build ${source}: ${detail}`);
  }
  return { LD_PRELOAD: library, SDK_BENCH_FSYNC_DELAY_MS: String(delayMs) };
}
