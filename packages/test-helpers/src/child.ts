import { type ChildProcess, spawn } from "node:child_process";
import type { TestContext } from "node:test";
import { waitUntil, within } from "./wait.ts";

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface ChildOptions {
  /** Arguments after `node` (the script first). */
  args: string[];
  /** The whole environment: nothing of the test runner's leaks in unless passed here. */
  env: Record<string, string>;
  cwd?: string;
  /** Written to stdin, which is then closed; without it stdin is ignored. */
  input?: string;
  /** A command that runs node, e.g. `["ip", "netns", "exec", "ns1"]` (it must exec, keeping the pid). */
  via?: string[];
  /** Keep stdin open (a pipe the test writes to: `child.stdin`) instead. */
  openStdin?: boolean;
}

export interface Child {
  child: ChildProcess;
  pid: number;
  /** Resolves once the process exited and its output was read to the end (never rejects). */
  exited: Promise<Exit>;
  stdout(): string;
  stderr(): string;
  running(): boolean;
  /** Resolves once `check` holds for the output so far; rejects when the process exits first or after `timeoutMs`. */
  waitForOutput(
    check: (out: { stdout: string; stderr: string }) => boolean,
    timeoutMs?: number,
    what?: string,
  ): Promise<void>;
  /** Sends `signal` (if still running) and waits, bounded, for the exit. */
  stop(signal?: NodeJS.Signals, timeoutMs?: number): Promise<Exit>;
}

/**
 * Spawns `node <args>` with exactly `env`, collecting its output. The process is SIGKILLed (if
 * still running) and awaited when the test ends.
 */
export function spawnNode(t: TestContext, options: ChildOptions): Child {
  const [command, ...viaArgs] = [...(options.via ?? []), process.execPath];
  const child = spawn(command!, [...viaArgs, ...options.args], {
    cwd: options.cwd,
    env: options.env,
    stdio: [options.input === undefined && !options.openStdin ? "ignore" : "pipe", "pipe", "pipe"],
  });
  if (child.pid === undefined) throw new Error(`could not spawn node ${options.args.join(" ")}`);
  let out = "";
  let err = "";
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
    out += chunk;
  });
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
    err += chunk;
  });
  if (options.input !== undefined) child.stdin!.end(options.input);
  // "close" rather than "exit": by then stdout and stderr have been read to the end.
  let exit: Exit | undefined;
  const exited = new Promise<Exit>((resolve) => {
    child.once("close", (code, signal) => resolve({ code, signal }));
    child.once("error", () => resolve({ code: child.exitCode, signal: child.signalCode }));
  });
  void exited.then((e) => {
    exit = e;
  });
  const running = () => child.exitCode === null && child.signalCode === null;
  const name = `node ${options.args.join(" ")} (pid ${child.pid})`;
  t.after(async () => {
    if (running()) child.kill("SIGKILL");
    await within(exited, 5_000, `${name} to exit after SIGKILL`);
  });
  const output = () => `\nstdout:\n${out}\nstderr:\n${err}`;
  return {
    child,
    pid: child.pid,
    exited,
    stdout: () => out,
    stderr: () => err,
    running,
    async waitForOutput(check, timeoutMs = 15_000, what = "output") {
      const state = () => ({ stdout: out, stderr: err });
      try {
        await waitUntil(
          () => {
            if (check(state())) return true;
            if (exit) throw new Error(`${name} exited ${JSON.stringify(exit)} before ${what}`);
            return false;
          },
          timeoutMs,
          what,
          25,
        );
      } catch (error) {
        throw new Error(`${(error as Error).message}${output()}`);
      }
    },
    async stop(signal = "SIGTERM", timeoutMs = 5_000) {
      if (running()) child.kill(signal);
      return within(exited, timeoutMs, `${name} to exit after ${signal}`);
    },
  };
}

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `node <args>` to its end; rejects (after killing it) if it takes longer than `timeoutMs`. */
export async function runNode(
  t: TestContext,
  options: ChildOptions & { timeoutMs?: number },
): Promise<RunResult> {
  const child = spawnNode(t, { ...options, input: options.input ?? "" });
  const timeoutMs = options.timeoutMs ?? 30_000;
  try {
    const exit = await within(child.exited, timeoutMs, `node ${options.args.join(" ")}`);
    return { code: exit.code, stdout: child.stdout(), stderr: child.stderr() };
  } catch (error) {
    child.child.kill("SIGKILL");
    throw new Error(`${(error as Error).message}\nstdout: ${child.stdout()}\nstderr: ${child.stderr()}`);
  }
}
