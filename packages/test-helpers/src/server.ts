import type { TestContext } from "node:test";
import { SdkClient } from "@sdk/client";
import type { AuthResult } from "@sdk/protocol";
import { createServer, type Extension, type Server } from "@sdk/server/app";
import { loadConfig } from "@sdk/server/config";
import pino from "pino";
import { tempDir } from "./temp.ts";

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

export interface TestServerOptions {
  env?: Record<string, string>;
  clock?: Parameters<typeof createServer>[0]["clock"];
  dataDir?: string;
  extensions?: Extension[];
  logger?: pino.Logger;
}

let counter = 0;

/** A server in this process that is built but not listening yet (closed when the test ends). */
export async function createTestServer(t: TestContext, options: TestServerOptions = {}): Promise<Server> {
  const config = loadConfig({
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

/** A real server in this process on a real port (0 → any free one) with a temp data dir, closed when the test ends. */
export async function startTestServer(t: TestContext, options: TestServerOptions = {}): Promise<TestServer> {
  const server = await createTestServer(t, options);
  const url = await server.listen();
  const client = (token?: string) => new SdkClient({ baseUrl: url, token });
  return {
    server,
    url,
    dataDir: server.config.dataDir,
    anon: client(),
    client,
    async user(email = `user${++counter}@example.com`, password = "correct horse battery") {
      const anon = client();
      const auth = await anon.api.register({ body: { email, password, issueToken: true } });
      return { client: client(auth.token!.token), auth, password };
    },
  };
}
