import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { TestContext } from "node:test";
import { fileURLToPath } from "node:url";
import { startServer as startServerProcess } from "../../server/test/helpers/process.ts";

export const sdkBin = fileURLToPath(new URL("../bin/sdk.mjs", import.meta.url));

export function tempDir(t: TestContext, prefix: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the real `sdk` binary in a child process with its own HOME. */
export function sdk(
  args: string[],
  options: { home: string; cwd: string; env?: Record<string, string>; input?: string; timeoutMs?: number },
): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [sdkBin, ...args], {
      cwd: options.cwd,
      env: { PATH: process.env.PATH ?? "", HOME: options.home, ...options.env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => {
      stdout += d;
    });
    child.stderr.on("data", (d) => {
      stderr += d;
    });
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`sdk ${args.join(" ")} timed out\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, options.timeoutMs ?? 30_000);
    child.on("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(options.input ?? "");
  });
}

/** Starts `sdk` and keeps it running (logs --tail, dev); collects its output line by line. */
export function sdkLive(
  args: string[],
  options: { home: string; cwd: string; env?: Record<string, string> },
) {
  const child = spawn(process.execPath, [sdkBin, ...args], {
    cwd: options.cwd,
    env: { PATH: process.env.PATH ?? "", HOME: options.home, ...options.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const state = { stdout: "", stderr: "" };
  child.stdout.on("data", (d) => {
    state.stdout += d;
  });
  child.stderr.on("data", (d) => {
    state.stderr += d;
  });
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return {
    child,
    state,
    exited,
    async waitFor(check: (out: typeof state) => boolean, timeoutMs = 15_000, what = "output") {
      const deadline = Date.now() + timeoutMs;
      while (!check(state)) {
        if (Date.now() > deadline)
          throw new Error(`timed out waiting for ${what}\nstdout: ${state.stdout}\nstderr: ${state.stderr}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
  };
}

/** A real server process on a free port with a temp data dir (the server tests' helper). */
export async function startServer(
  t: TestContext,
  env: Record<string, string> = {},
): Promise<{ url: string; child: ChildProcess }> {
  const proc = await startServerProcess(t, tempDir(t, "sdk-cli-server-"), { LOG_LEVEL: "warn", ...env });
  return { url: proc.url, child: proc.child };
}
