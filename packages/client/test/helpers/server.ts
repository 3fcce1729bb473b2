// A real sdk server for the client's tests: `@sdk/server/main` in its own process, on a free port,
// with a fresh data directory. The client meets it exactly as the CLI and the dashboard do.
import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { freePort } from "@sdk/test-helpers";

const serverMain = fileURLToPath(import.meta.resolve("@sdk/server/main"));

export interface ServerProcess {
  url: string;
  /** Stops the process (SIGTERM: the server closes its sockets with 1001) and waits for its exit. */
  stop(): Promise<void>;
  /** Starts it again on the same port and data directory, once it answers /health. */
  start(): Promise<void>;
  /** Stops it if running and removes its data directory. */
  dispose(): Promise<void>;
}

export async function startServer(): Promise<ServerProcess> {
  const port = await freePort();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "sdk-client-test-"));
  const url = `http://127.0.0.1:${port}`;
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  let stderr = "";

  const start = async () => {
    stderr = "";
    const proc = spawn(process.execPath, [serverMain], {
      env: {
        PATH: process.env.PATH ?? "",
        PORT: String(port),
        HOST: "127.0.0.1",
        DATA_DIR: dataDir,
        LOG_LEVEL: "warn",
      },
      stdio: ["ignore", "ignore", "pipe"],
    });
    proc.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
    });
    child = proc;
    exited = new Promise((resolve) => proc.once("close", () => resolve()));
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      if (proc.exitCode !== null) throw new Error(`the server exited (${proc.exitCode}): ${stderr}`);
      const up = await fetch(`${url}/health`, { signal: AbortSignal.timeout(2_000) }).then(
        (r) => r.ok,
        () => false,
      );
      if (up) return;
      await sleep(50);
    }
    throw new Error(`the server did not answer /health within 30 s: ${stderr}`);
  };
  const stop = async () => {
    if (child && child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    await exited;
  };

  await start();
  return {
    url,
    start,
    stop,
    async dispose() {
      await stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
