import type { TestContext } from "node:test";
import { SdkClient } from "@sdk/client";
import type { AuthResult } from "@sdk/protocol";
import { createServer, type Server } from "@sdk/server/app";
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

let counter = 0;

/** A real server in this process on a real port (0 → any free one) with a temp data dir, closed when the test ends. */
export async function startTestServer(
  t: TestContext,
  options: {
    env?: Record<string, string>;
    clock?: Parameters<typeof createServer>[0]["clock"];
    dataDir?: string;
  } = {},
): Promise<TestServer> {
  const dataDir = options.dataDir ?? tempDir(t);
  const config = loadConfig({
    PORT: "0",
    HOST: "127.0.0.1",
    DATA_DIR: dataDir,
    LOG_LEVEL: "silent",
    ...options.env,
  });
  const server = await createServer({
    config,
    clock: options.clock,
    logger: pino({ level: config.logLevel }),
  });
  t.after(() => server.close());
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
