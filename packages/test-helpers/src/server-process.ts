import net from "node:net";
import type { TestContext } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { SdkClient } from "@sdk/client";
import { type Child, type Exit, spawnNode } from "./child.ts";
import { tempDir } from "./temp.ts";

/** The repository root: the server is started from here, as `npm start` does. */
/** Spawned servers run in their package's directory, as `npm start` would from a checkout. */
const serverDir = fileURLToPath(new URL(".", import.meta.resolve("@sdk/server/package.json")));
const mainScript = fileURLToPath(import.meta.resolve("@sdk/server/main"));

export interface ServerProcess extends Child {
  port: number;
  url: string;
  dataDir: string;
  /** stdout parsed as JSON log lines (LOG_FORMAT=json); lines that are not JSON are skipped. */
  logs(): Array<{ level?: number; msg?: string; [key: string]: unknown }>;
  /** A typed client for this process; each request gives up after 5 s. */
  client(token?: string): SdkClient;
}

/** A port that was free a moment ago: listen on port 0, note the port, close. */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (typeof address !== "object" || !address) throw new Error("no port from listen(0)");
  return address.port;
}

/** A fetch that gives up after `timeoutMs`, so no request in these tests can hang forever. */
export function boundedFetch(timeoutMs = 5_000): typeof fetch {
  return (input, init) => fetch(input, { ...init, signal: AbortSignal.timeout(timeoutMs) });
}

/**
 * The environment for the server: only what is given here, so that a PORT or DATABASE_URL in the
 * environment running the tests cannot leak in.
 */
export function serverEnv(port: number, dataDir: string, extra: Record<string, string> = {}) {
  return {
    PATH: process.env.PATH ?? "",
    PORT: String(port),
    HOST: "127.0.0.1",
    DATA_DIR: dataDir,
    LOG_FORMAT: "json",
    LOG_LEVEL: "info",
    // Tests never multicast on the machine's network (test/mdns.test.ts turns it on in namespaces).
    MDNS: "false",
    ...extra,
  };
}

/** Spawns `node packages/server/src/main.ts` with exactly `env`; killed and awaited when the test ends. */
export function spawnServer(
  t: TestContext,
  options: { env: Record<string, string>; port: number; dataDir: string },
): ServerProcess {
  const child = spawnNode(t, { args: [mainScript], cwd: serverDir, env: options.env });
  const url = `http://127.0.0.1:${options.port}`;
  return Object.assign(child, {
    port: options.port,
    url,
    dataDir: options.dataDir,
    logs: () =>
      child
        .stdout()
        .split("\n")
        .filter((line) => line.startsWith("{"))
        .flatMap((line) => {
          try {
            return [JSON.parse(line)];
          } catch {
            return [];
          }
        }),
    client: (token?: string) => new SdkClient({ baseUrl: url, token, fetch: boundedFetch() }),
  });
}

/**
 * Polls GET /health (each poll a real request) until it answers 200, the process exits, or the
 * attempts run out.
 */
export async function waitForHealth(proc: ServerProcess, attempts = 200, intervalMs = 50): Promise<void> {
  let exit: Exit | undefined;
  void proc.exited.then((e) => {
    exit = e;
  });
  let last = "no attempt";
  for (let i = 0; i < attempts; i++) {
    if (exit) break;
    try {
      const res = await fetch(`${proc.url}/health`, { signal: AbortSignal.timeout(2_000) });
      await res.arrayBuffer();
      if (res.status === 200) return;
      last = `HTTP ${res.status}`;
    } catch (error) {
      last = String((error as { cause?: unknown }).cause ?? error);
    }
    await sleep(intervalMs);
  }
  throw new Error(
    `server on ${proc.url} not healthy (${exit ? `exited ${JSON.stringify(exit)}` : `last: ${last}`})\n` +
      `stdout:\n${proc.stdout()}\nstderr:\n${proc.stderr()}`,
  );
}

/**
 * Picks a free port, spawns the server on `dataDir` (a temp dir when omitted) and waits until
 * /health answers. Should another process grab the port in between (EADDRINUSE), tries again with
 * a new one, a bounded number of times.
 */
export async function startServerProcess(
  t: TestContext,
  dataDir: string = tempDir(t, "sdk-server-data-"),
  extraEnv: Record<string, string> = {},
): Promise<ServerProcess & { startedAt: number; bootMs: number }> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const started = performance.now();
    const proc = spawnServer(t, { env: serverEnv(port, dataDir, extraEnv), port, dataDir });
    try {
      await waitForHealth(proc);
      return Object.assign(proc, { startedAt: started, bootMs: performance.now() - started });
    } catch (error) {
      if (attempt < 3 && proc.stderr().includes("EADDRINUSE")) continue;
      throw error;
    }
  }
}
