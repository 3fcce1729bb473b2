import type { TestContext } from "node:test";
import { fileURLToPath } from "node:url";
import { type RunResult, runNode, spawnNode, startServerProcess, tempDir } from "@sdk/test-helpers";

export { tempDir };

export const sdkBin = fileURLToPath(new URL("../bin/sdk.mjs", import.meta.url));

const env = (home: string, extra: Record<string, string> = {}) => ({
  PATH: process.env.PATH ?? "",
  HOME: home,
  ...extra,
});

/** Runs the real `sdk` binary in a child process with its own HOME. */
export function sdk(
  t: TestContext,
  args: string[],
  options: { home: string; cwd: string; env?: Record<string, string>; input?: string; timeoutMs?: number },
): Promise<RunResult> {
  return runNode(t, {
    args: [sdkBin, ...args],
    cwd: options.cwd,
    env: env(options.home, options.env),
    input: options.input,
    timeoutMs: options.timeoutMs,
  });
}

/** Starts `sdk` and keeps it running (logs --tail, dev); collects its output. */
export function sdkLive(
  t: TestContext,
  args: string[],
  options: { home: string; cwd: string; env?: Record<string, string> },
) {
  return spawnNode(t, { args: [sdkBin, ...args], cwd: options.cwd, env: env(options.home, options.env) });
}

/** A real server process on a free port with a temp data dir. */
export async function startServer(
  t: TestContext,
  extraEnv: Record<string, string> = {},
): Promise<{ url: string }> {
  const proc = await startServerProcess(t, tempDir(t, "sdk-cli-server-"), { LOG_LEVEL: "warn", ...extraEnv });
  return { url: proc.url };
}
