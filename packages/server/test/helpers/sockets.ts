import type { TestContext } from "node:test";
import WebSocket from "ws";

/** Collects JSON frames from a socket and lets a test wait for one that matches. */
export class Inbox {
  readonly messages: any[] = [];
  readonly #waiters = new Set<{ match: (m: any) => boolean; resolve: (m: any) => void }>();

  push(message: any): void {
    this.messages.push(message);
    for (const waiter of this.#waiters) {
      if (waiter.match(message)) {
        this.#waiters.delete(waiter);
        waiter.resolve(message);
      }
    }
  }

  /**
   * The first message (already received or still to come) that matches. `timeoutMs` only guards
   * against a hang, so it is generous: a loaded machine must not fail a test that would pass.
   */
  next(match: (m: any) => boolean, timeoutMs = 15_000, what = "a matching message"): Promise<any> {
    const found = this.messages.find(match);
    if (found) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const waiter = {
        match,
        resolve: (m: any) => {
          clearTimeout(timer);
          resolve(m);
        },
      };
      const timer = setTimeout(() => {
        this.#waiters.delete(waiter);
        reject(
          new Error(
            `timed out after ${timeoutMs}ms waiting for ${what}; got ${JSON.stringify(this.messages).slice(-2000)}`,
          ),
        );
      }, timeoutMs);
      this.#waiters.add(waiter);
    });
  }

  type(type: string, timeoutMs?: number): Promise<any> {
    return this.next((m) => m.type === type, timeoutMs, `a ${type} message`);
  }
}

export interface OpenSocket {
  ws: WebSocket;
  inbox: Inbox;
  closed: Promise<{ code: number; reason: string }>;
  send(message: unknown): void;
}

/** Opens a WebSocket; resolves once open, or rejects with the HTTP status and body of a refused upgrade. */
export function openSocket(
  t: TestContext,
  url: string,
  options: { headers?: Record<string, string>; protocols?: string[] } = {},
): Promise<OpenSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, options.protocols ?? [], { headers: options.headers });
    t.after(() => ws.terminate());
    const inbox = new Inbox();
    const closed = new Promise<{ code: number; reason: string }>((done) =>
      ws.on("close", (code, reason) => done({ code, reason: reason.toString() })),
    );
    ws.on("message", (data) => {
      try {
        inbox.push(JSON.parse(data.toString()));
      } catch {
        inbox.push({ unparsable: data.toString() });
      }
    });
    ws.on("unexpected-response", (_req, res) => {
      let body = "";
      res.on("data", (chunk) => {
        body += chunk;
      });
      res.on("end", () => {
        let parsed: unknown = body;
        try {
          parsed = JSON.parse(body);
        } catch {}
        reject(
          Object.assign(new Error(`upgrade refused: ${res.statusCode}`), {
            status: res.statusCode,
            body: parsed,
          }),
        );
      });
    });
    ws.on("error", (error) => reject(error));
    ws.on("open", () =>
      resolve({ ws, inbox, closed, send: (m) => ws.send(typeof m === "string" ? m : JSON.stringify(m)) }),
    );
  });
}

export const wsUrl = (httpUrl: string, path: string) => `${httpUrl.replace(/^http/, "ws")}${path}`;

export const basic = (deviceId: string, secret: string) => ({
  authorization: `Basic ${Buffer.from(`${deviceId}:${secret}`).toString("base64")}`,
});

export const hello = (board = "pico_w") => ({
  type: "hello",
  protocol: 1,
  firmware: "test-1.0",
  board,
  maxFrame: 16384,
});
