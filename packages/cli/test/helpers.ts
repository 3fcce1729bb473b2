import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import type { TestContext } from "node:test";
import { fileURLToPath } from "node:url";
import { SdkClient } from "@sdk/client";
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
  options: { home: string; cwd: string; env?: Record<string, string>; openStdin?: boolean },
) {
  return spawnNode(t, {
    args: [sdkBin, ...args],
    cwd: options.cwd,
    env: env(options.home, options.env),
    openStdin: options.openStdin,
  });
}

/** A real server process on a free port with a temp data dir. */
export async function startServer(
  t: TestContext,
  extraEnv: Record<string, string> = {},
): Promise<{ url: string }> {
  const proc = await startServerProcess(t, tempDir(t, "sdk-cli-server-"), { LOG_LEVEL: "warn", ...extraEnv });
  return { url: proc.url };
}

/**
 * A server process, a user signed in through `sdk login` (HOME `home`, working dir `work`) and one
 * project; `run` runs `sdk` for that project.
 */
export async function signedInProject(t: TestContext, projectName: string, tempPrefix: string) {
  const password = "correct horse battery";
  const { url } = await startServer(t);
  await new SdkClient({ baseUrl: url }).api.register({ body: { email: "maker@example.com", password } });
  const home = tempDir(t, `${tempPrefix}-home-`);
  const work = tempDir(t, `${tempPrefix}-work-`);
  const login = await sdk(t, ["login", "--host", url, "--email", "maker@example.com", "--password-stdin"], {
    home,
    cwd: work,
    input: `${password}\n`,
  });
  assert.equal(login.code, 0, login.stderr);
  const token = JSON.parse(fs.readFileSync(path.join(home, ".sdk", "credentials.json"), "utf8")).hosts[url]
    .token;
  const client = new SdkClient({ baseUrl: url, token });
  const project = await client.api.createProject({ body: { name: projectName } });
  const run = (args: string[]) => sdk(t, [...args, "--project", project.id], { home, cwd: work });
  return { url, home, work, client, project, run };
}

/** True when GNU sed (for `sed -i` without a suffix) is installed; else skips `t` (fails under CI). */
export function gnuSed(t: TestContext): boolean {
  try {
    execFileSync("sed", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    if (process.env.CI) throw new Error("GNU sed is needed for the sed -i checks (apt-get install sed)");
    t.skip("GNU sed not found: the sed -i checks did not run");
    return false;
  }
}
