import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { TestContext } from "node:test";
import { SdkClient } from "@sdk/client";
import type { AuthResult } from "@sdk/protocol";
import pino from "pino";
import { createServer, type Extension, type Server } from "../../src/app.ts";
import { type Config, loadConfig } from "../../src/config.ts";
import type { Clock } from "../../src/lib/clock.ts";

export function tempDir(t: TestContext, prefix = "sdk-test-"): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export interface TestServer {
  server: Server;
  url: string;
  dataDir: string;
  /** A client without credentials. */
  anon: SdkClient;
  client(token?: string): SdkClient;
  /** Registers an account and returns a client that uses an API token for it. */
  user(email?: string, password?: string): Promise<{ client: SdkClient; auth: AuthResult; password: string }>;
}

let counter = 0;

export interface TestServerOptions {
  env?: Record<string, string>;
  clock?: Clock;
  dataDir?: string;
  extensions?: Extension[];
  logger?: pino.Logger;
}

/** A server that is built but not listening yet (closed when the test ends). */
export async function createTestServer(t: TestContext, options: TestServerOptions = {}): Promise<Server> {
  const config: Config = loadConfig({
    PORT: "0",
    HOST: "127.0.0.1",
    DATA_DIR: options.dataDir ?? tempDir(t),
    LOG_LEVEL: "silent",
    ...options.env,
  });
  const server = await createServer({
    config,
    clock: options.clock,
    logger: options.logger ?? pino({ level: config.logLevel }),
    extensions: options.extensions,
  });
  t.after(() => server.close());
  return server;
}

/** A real server on a real port (0 → any free one) with a temp data dir, closed when the test ends. */
export async function startTestServer(t: TestContext, options: TestServerOptions = {}): Promise<TestServer> {
  const server = await createTestServer(t, options);
  const dataDir = server.config.dataDir;
  const url = await server.listen();
  const client = (token?: string) => new SdkClient({ baseUrl: url, token });
  return {
    server,
    url,
    dataDir,
    anon: client(),
    client,
    async user(email = `user${++counter}@example.com`, password = "correct horse battery") {
      const anon = client();
      const auth = await anon.api.register({ body: { email, password, issueToken: true } });
      return { client: client(auth.token!.token), auth, password };
    },
  };
}

/** Raw fetch against the server, for what the typed client would not send. */
export async function raw(
  url: string,
  init: RequestInit & { json?: unknown } = {},
): Promise<{ status: number; headers: Headers; body: any }> {
  const headers = new Headers(init.headers);
  let body = init.body;
  if (init.json !== undefined) {
    headers.set("content-type", "application/json");
    body = JSON.stringify(init.json);
  }
  const response = await fetch(url, { ...init, headers, body, redirect: "manual" });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {}
  return { status: response.status, headers: response.headers, body: parsed };
}
