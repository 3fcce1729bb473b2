import type { IncomingMessage } from "node:http";
import { deviceCloseCodes, maxFrameBytes, parseRestartHint, restartRetry } from "@sdk/protocol";
import WebSocket from "ws";
import { Backoff, type ReconnectOptions } from "./backoff.ts";

/** The server refused the upgrade with 401: the device id or secret is wrong or revoked. */
export interface AuthFailure {
  status: number;
  code: string;
  message: string;
}

/** A frame of this many bytes would be refused by the server (close 1009); it is never sent. */
export class FrameTooLargeError extends RangeError {
  readonly bytes: number;

  constructor(bytes: number) {
    super(
      `a ${bytes}-byte frame would exceed the protocol limit (frames must be under ${maxFrameBytes} bytes)`,
    );
    this.name = "FrameTooLargeError";
    this.bytes = bytes;
  }
}

export interface ConnectionHandlers {
  connecting(attempt: number, url: string): void;
  open(): void;
  text(text: string): void;
  binary(): void;
  /** A connection that had opened is gone (any cause). */
  closed(code: number, reason: string): void;
  authFailed(failure: AuthFailure): void;
  error(error: Error): void;
  retry(attempt: number, delayMs: number): void;
  /** A frozen device dropped a ping or a frame. */
  ignored(what: "ping" | "frame"): void;
  /** No more attempts will be made (stop(), kill(), or reconnecting disabled). */
  idle(): void;
}

export interface ConnectionOptions {
  url: string;
  deviceId: string;
  secret: string;
  /** Incoming frames larger than this close the socket with 1009 (what the device announced). */
  maxPayload: number;
  reconnect: ReconnectOptions | false;
  handshakeTimeoutMs: number;
  now: () => number;
}

/** Bytes of an error response body read to find its message. */
const maxErrorBody = 8 * 1024;

/**
 * One device's WebSocket: dials with HTTP Basic credentials, reconnects with backoff, and can
 * close cleanly, drop the TCP socket, or freeze (stop answering pings) for tests.
 */
export class Connection {
  readonly #options: ConnectionOptions;
  readonly #h: ConnectionHandlers;
  readonly #backoff: Backoff | null;
  #ws: WebSocket | undefined;
  #running = false;
  #attempt = 0;
  #openedAt = 0;
  #retryTimer: NodeJS.Timeout | undefined;
  #retryAfterMs = 0;
  #watchdog: NodeJS.Timeout | undefined;
  #watchdogMs = 0;
  #frozen = false;
  #closeWaiters: (() => void)[] = [];

  constructor(options: ConnectionOptions, handlers: ConnectionHandlers) {
    this.#options = options;
    this.#h = handlers;
    this.#backoff = options.reconnect ? new Backoff(options.reconnect) : null;
  }

  get isOpen(): boolean {
    return this.#ws?.readyState === WebSocket.OPEN;
  }

  get running(): boolean {
    return this.#running;
  }

  get frozen(): boolean {
    return this.#frozen;
  }

  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#backoff?.reset();
    if (!this.#ws) this.#dial();
  }

  /** Closes with a close frame (1000 by default) and stops reconnecting. */
  stop(code = 1000, reason = "stopped"): Promise<void> {
    this.#running = false;
    clearTimeout(this.#retryTimer);
    this.#retryTimer = undefined;
    const ws = this.#ws;
    if (!ws) {
      this.#h.idle();
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      this.#closeWaiters.push(resolve);
      if (ws.readyState === WebSocket.OPEN) {
        ws.close(code, reason);
        // A server that never answers the close frame does not hold the device up.
        setTimeout(() => ws.terminate(), 3_000).unref();
      } else {
        ws.terminate();
      }
    });
  }

  /** Destroys the TCP socket without a close frame; reconnects only if asked to. */
  kill(reconnect: boolean): void {
    if (!reconnect) {
      this.#running = false;
      clearTimeout(this.#retryTimer);
      this.#retryTimer = undefined;
    }
    if (this.#ws) this.#ws.terminate();
    else if (!reconnect) this.#h.idle();
  }

  /** A frozen device keeps its socket but answers nothing: no pongs, no frames in or out. */
  freeze(frozen: boolean): void {
    this.#frozen = frozen;
    if (frozen) clearTimeout(this.#watchdog);
    else this.#feedWatchdog();
  }

  /**
   * The connection is dropped (without a close frame) when nothing arrives from the server for
   * `ms` (0 disables). Any frame or ping restarts the wait.
   */
  setWatchdog(ms: number): void {
    this.#watchdogMs = ms;
    this.#feedWatchdog();
  }

  /** Sends a text frame; false when there is no open connection (or the device is frozen). */
  send(text: string): boolean {
    const bytes = Buffer.byteLength(text);
    if (bytes >= maxFrameBytes) throw new FrameTooLargeError(bytes);
    const ws = this.#ws;
    if (!ws || ws.readyState !== WebSocket.OPEN || this.#frozen) return false;
    ws.send(text);
    return true;
  }

  #dial(): void {
    this.#retryTimer = undefined;
    this.#attempt++;
    const { url, deviceId, secret } = this.#options;
    this.#h.connecting(this.#attempt, url);
    const ws = new WebSocket(url, {
      headers: { authorization: `Basic ${Buffer.from(`${deviceId}:${secret}`).toString("base64")}` },
      maxPayload: this.#options.maxPayload,
      perMessageDeflate: false,
      handshakeTimeout: this.#options.handshakeTimeoutMs,
      followRedirects: false,
      autoPong: false,
    });
    this.#ws = ws;
    let opened = false;
    let quiet = false; // the handshake failure was already reported

    ws.on("unexpected-response", (_req, res) => {
      quiet = true;
      void readBody(res).then((body) => {
        this.#refused(res, body);
        ws.terminate();
      });
    });
    ws.on("open", () => {
      opened = true;
      this.#openedAt = this.#options.now();
      this.#backoff?.endQuick();
      this.#h.open();
    });
    ws.on("message", (data, isBinary) => {
      if (this.#frozen) {
        this.#h.ignored("frame");
        return;
      }
      this.#feedWatchdog();
      if (isBinary) this.#h.binary();
      else this.#h.text(data.toString());
    });
    ws.on("ping", (data) => {
      if (this.#frozen) {
        this.#h.ignored("ping");
        return;
      }
      this.#feedWatchdog();
      if (ws.readyState === WebSocket.OPEN) ws.pong(data);
    });
    ws.on("pong", () => this.#feedWatchdog());
    ws.on("error", (error) => {
      if (!quiet && this.#running) this.#h.error(error);
    });
    ws.on("close", (code, reason) => this.#closed(ws, opened, code, reason.toString()));
  }

  #refused(res: IncomingMessage, body: string): void {
    const status = res.statusCode ?? 0;
    let code = `http_${status}`;
    let message = `the server refused the connection (HTTP ${status})`;
    try {
      const parsed = JSON.parse(body) as { error?: { code?: unknown; message?: unknown } };
      if (typeof parsed.error?.code === "string") code = parsed.error.code;
      if (typeof parsed.error?.message === "string") message = parsed.error.message;
    } catch {
      // not a JSON envelope: keep the generic message
    }
    const retryAfter = Number(res.headers["retry-after"]);
    if (Number.isFinite(retryAfter) && retryAfter > 0) this.#retryAfterMs = retryAfter * 1000;
    if (!this.#running) return;
    if (status === 401) {
      // Wrong or revoked credentials do not start working by themselves: stop, as after 4001.
      this.#running = false;
      this.#h.authFailed({ status, code, message });
    } else {
      this.#h.error(Object.assign(new Error(message), { status, code }));
    }
  }

  #closed(ws: WebSocket, opened: boolean, code: number, reason: string): void {
    if (this.#ws !== ws) return;
    this.#ws = undefined;
    clearTimeout(this.#watchdog);
    this.#watchdogMs = 0;
    this.#frozen = false;
    if (opened) this.#h.closed(code, reason);
    const waiters = this.#closeWaiters;
    this.#closeWaiters = [];
    for (const resolve of waiters) resolve();
    if (code === deviceCloseCodes.revoked) this.#running = false;
    if (!this.#running || !this.#backoff || !this.#options.reconnect) {
      this.#running = false;
      this.#h.idle();
      return;
    }
    const now = this.#options.now();
    const stable = opened && now - this.#openedAt >= this.#options.reconnect.resetAfterMs;
    if (stable) this.#backoff.reset();
    if (code === deviceCloseCodes.serviceRestart) {
      // The server restarts: it is back within seconds, and its hint spreads the reconnects.
      const hint = parseRestartHint(reason) ?? restartRetry;
      this.#backoff.quick(now, restartRetry.windowMs, hint.minMs, hint.maxMs);
    } else if (code === 1006 && stable) {
      // A connection that had been up ended without a close frame (the server was killed, say).
      this.#backoff.capFor(now, restartRetry.lostWindowMs, restartRetry.lostMaxMs);
    }
    let delay = this.#backoff.next(now);
    // Replaced by a newer connection with the same credentials: retrying at once would replace it back.
    if (code === deviceCloseCodes.replaced) delay = Math.max(delay, this.#options.reconnect.capMs);
    if (this.#retryAfterMs > 0) {
      delay = Math.max(delay, Math.min(this.#retryAfterMs, this.#options.reconnect.capMs));
      this.#retryAfterMs = 0;
    }
    this.#h.retry(this.#attempt + 1, delay);
    this.#retryTimer = setTimeout(() => this.#dial(), delay);
  }

  #feedWatchdog(): void {
    clearTimeout(this.#watchdog);
    const ws = this.#ws;
    if (this.#watchdogMs <= 0 || this.#frozen || !ws) return;
    const ms = this.#watchdogMs;
    this.#watchdog = setTimeout(() => {
      if (this.#ws !== ws) return;
      this.#h.error(new Error(`nothing from the server for ${ms} ms: dropping the connection`));
      ws.terminate();
    }, ms);
    this.#watchdog.unref();
  }
}

function readBody(res: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks).toString("utf8"));
    };
    const timer = setTimeout(done, 2_000);
    res.on("data", (chunk: Buffer) => {
      if (size < maxErrorBody) chunks.push(chunk);
      size += chunk.length;
    });
    res.on("end", done);
    res.on("error", done);
    res.on("close", done);
  });
}
