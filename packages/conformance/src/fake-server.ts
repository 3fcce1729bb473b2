import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import { type CommandType, deviceSocketPath, Hello, protocolVersion } from "@sdk/protocol";
import { within } from "@sdk/test-helpers";
import { WebSocket, WebSocketServer } from "ws";

/** One upgrade request the server saw. */
export interface Attempt {
  at: number;
  deviceId: string | null;
  accepted: boolean;
}

export type Message = { type: string } & Record<string, unknown>;

export interface FakeServerOptions {
  /** deviceId → secret. */
  credentials: Record<string, string>;
  heartbeatSeconds?: number;
  /** Answer hello with welcome (default true). */
  welcome?: boolean;
}

/**
 * A small stand-in for the sdk server's device socket: checks Basic credentials (401 with the
 * JSON error envelope otherwise), answers hello with welcome, sends commands, records frames.
 */
export class FakeServer {
  readonly attempts: Attempt[] = [];
  readonly connections: FakeConnection[] = [];
  readonly address: string;
  readonly #http: http.Server;
  readonly #wss: WebSocketServer;
  readonly #options: FakeServerOptions;
  #waiters: ((c: FakeConnection) => void)[] = [];
  #attemptWaiters: (() => void)[] = [];

  private constructor(server: http.Server, options: FakeServerOptions) {
    this.#http = server;
    this.#options = options;
    this.#wss = new WebSocketServer({ noServer: true, maxPayload: 64 * 1024 - 1 });
    const { port } = server.address() as AddressInfo;
    this.address = `127.0.0.1:${port}`;
    server.on("upgrade", (req, socket, head) => this.#upgrade(req, socket, head));
  }

  static async start(options: FakeServerOptions): Promise<FakeServer> {
    const server = http.createServer((_req, res) => res.writeHead(404).end());
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return new FakeServer(server, options);
  }

  /** The next connection that completes hello (or an existing one not yet taken). */
  nextConnection(timeoutMs = 5_000): Promise<FakeConnection> {
    const taken = this.connections.find((c) => !c.taken && c.hello);
    if (taken) {
      taken.taken = true;
      return Promise.resolve(taken);
    }
    return within(
      new Promise<FakeConnection>((resolve) => this.#waiters.push(resolve)),
      timeoutMs,
      "a device connection",
    ).then((c) => {
      c.taken = true;
      return c;
    });
  }

  /** Resolves once `count` upgrade attempts were seen. */
  waitForAttempts(count: number, timeoutMs = 5_000): Promise<void> {
    if (this.attempts.length >= count) return Promise.resolve();
    return within(
      new Promise<void>((resolve) => {
        const check = () => {
          if (this.attempts.length >= count) resolve();
          else this.#attemptWaiters.push(check);
        };
        this.#attemptWaiters.push(check);
      }),
      timeoutMs,
      `${count} connection attempts`,
    );
  }

  async close(): Promise<void> {
    for (const client of this.#wss.clients) client.terminate();
    this.#wss.close();
    this.#http.closeAllConnections();
    await new Promise<void>((resolve) => this.#http.close(() => resolve()));
  }

  #upgrade(req: http.IncomingMessage, socket: Duplex, head: Buffer): void {
    socket.on("error", () => {}); // a client that gives up mid-handshake resets the socket
    const credentials = parseBasic(req.headers.authorization);
    const ok =
      new URL(req.url ?? "/", "http://x").pathname === deviceSocketPath &&
      credentials !== null &&
      this.#options.credentials[credentials.id] === credentials.secret;
    this.attempts.push({ at: performance.now(), deviceId: credentials?.id ?? null, accepted: ok });
    const waiters = this.#attemptWaiters;
    this.#attemptWaiters = [];
    for (const w of waiters) w();
    if (!ok) {
      const body = JSON.stringify({
        success: false,
        error: {
          code: "invalid_device_credentials",
          message: "Invalid device credentials",
          docs: "http://127.0.0.1/docs/errors#invalid_device_credentials",
        },
      });
      socket.end(
        `HTTP/1.1 401 Unauthorized\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
      return;
    }
    this.#wss.handleUpgrade(req, socket, head, (ws) => {
      const connection = new FakeConnection(ws, credentials!.id, req);
      this.connections.push(connection);
      ws.once("message", (data) => {
        const hello = Hello.safeParse(JSON.parse(data.toString()));
        if (!hello.success) {
          ws.close(4002, "no hello");
          return;
        }
        connection.hello = hello.data;
        if (this.#options.welcome !== false) {
          ws.send(
            JSON.stringify({
              type: "welcome",
              protocol: protocolVersion,
              deviceId: connection.deviceId,
              serverTime: new Date().toISOString(),
              heartbeatSeconds: this.#options.heartbeatSeconds ?? 30,
            }),
          );
        }
        connection.listen();
        const waiter = this.#waiters.shift();
        if (waiter) waiter(connection);
      });
    });
  }
}

/** One accepted device socket, seen from the server. */
export class FakeConnection {
  readonly ws: WebSocket;
  readonly deviceId: string;
  readonly request: http.IncomingMessage;
  hello: Hello | null = null;
  taken = false;
  /** Frames after hello, parsed. */
  readonly messages: Message[] = [];
  /** Byte length of every frame after hello. */
  readonly frameSizes: number[] = [];
  /** How the socket closed, as the server saw it (1006: no close frame). */
  readonly closed: Promise<{ code: number; reason: string }>;
  #nextId = 1;
  #listeners = new Set<(m: Message) => void>();

  constructor(ws: WebSocket, deviceId: string, request: http.IncomingMessage) {
    this.ws = ws;
    this.deviceId = deviceId;
    this.request = request;
    this.closed = new Promise((resolve) => {
      ws.on("close", (code, reason) => resolve({ code, reason: reason.toString() }));
    });
  }

  listen(): void {
    this.ws.on("message", (data) => {
      this.frameSizes.push((data as Buffer).length);
      let message: Message;
      try {
        message = JSON.parse(data.toString()) as Message;
      } catch {
        message = { type: "__unparsable", text: data.toString() };
      }
      this.messages.push(message);
      for (const listener of [...this.#listeners]) listener(message);
    });
  }

  /** A frame already received or the next one, matching `predicate`. */
  message(predicate: (m: Message) => boolean, timeoutMs = 5_000, from = 0): Promise<Message> {
    const found = this.messages.slice(from).find(predicate);
    if (found) return Promise.resolve(found);
    let listener: (m: Message) => void = () => {};
    return within(
      new Promise<Message>((resolve) => {
        listener = (m) => {
          if (predicate(m)) resolve(m);
        };
        this.#listeners.add(listener);
      }),
      timeoutMs,
      "a device message",
    ).finally(() => this.#listeners.delete(listener));
  }

  /** Sends a command and resolves with the device's `result` or `error` frame for it. */
  command(
    type: CommandType | string,
    args: Record<string, unknown> = {},
    timeoutMs = 5_000,
  ): Promise<Message> {
    const id = this.#nextId++;
    const from = this.messages.length;
    this.send({ ...args, type, id });
    return this.message((m) => (m.type === "result" || m.type === "error") && m.id === id, timeoutMs, from);
  }

  /** Sends a command that must succeed; resolves with its `value`. */
  async ok(type: CommandType, args: Record<string, unknown> = {}): Promise<unknown> {
    const reply = await this.command(type, args);
    if (reply.type !== "result") throw new Error(`${type} failed: ${JSON.stringify(reply)}`);
    return reply.value;
  }

  send(message: object | string): void {
    this.ws.send(typeof message === "string" ? message : JSON.stringify(message));
  }
}

function parseBasic(header: string | undefined): { id: string; secret: string } | null {
  const match = /^Basic ([A-Za-z0-9+/=]+)$/.exec(header ?? "");
  if (!match) return null;
  const decoded = Buffer.from(match[1]!, "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  if (colon < 0) return null;
  return { id: decoded.slice(0, colon), secret: decoded.slice(colon + 1) };
}

export { WebSocket };
