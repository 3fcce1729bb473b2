import type { Board, Welcome } from "@sdk/protocol";
import type { ReconnectOptions } from "./backoff.ts";
import type { AuthFailure } from "./connection.ts";

export interface SimulatedDeviceOptions {
  /** `host:port` (ws://), a bare host (wss://, port 443), or an http(s)/ws(s) URL. */
  server: string;
  deviceId: string;
  secret: string;
  /** Default "pico_w". */
  board?: Board;
  /** The firmware string in hello (1–64 chars). Default `sim-<simulator version>`. */
  firmware?: string;
  /** The largest frame the device accepts, announced in hello (256–65535). Default 65535. */
  maxFrame?: number;
  /** The protocol version in hello. Default the current one. */
  protocol?: number;
  /** Send hello on connect (default true; false to test the server's hello timeout). */
  sendHello?: boolean;
  /** Reconnect timing, or false to stay down after the first connection ends. */
  reconnect?: Partial<ReconnectOptions> | false;
  /** Give up a handshake after this long (default 10 000 ms). */
  handshakeTimeoutMs?: number;
  /** Drop the connection if no welcome arrives this long after opening (default 15 000 ms). */
  welcomeTimeoutMs?: number;
  /**
   * Drop the connection when nothing (not even a ping) arrived from the server for this long.
   * Default 2.5 × the welcome's heartbeatSeconds; false disables.
   */
  heartbeatTimeoutMs?: number | false;
  /** Entries kept per pin history and in the command record (default 10 000). */
  historyLimit?: number;
  /** The device's clock, ms (default Date.now). Timestamps in histories and records use it. */
  now?: () => number;
}

export type LinkState = "stopped" | "connecting" | "handshaking" | "connected" | "waiting";

/** One command frame the server sent, with the answer the device gave. */
export interface CommandRecord {
  /** null when the frame had no valid id (answered with a `malformed` error). */
  id: number | null;
  type: string;
  /** The frame without `type` and `id`, as received. */
  args: Record<string, unknown>;
  at: number;
  /** The answer, once sent; null while pending or when an override chose not to answer. */
  reply: { value: unknown } | { error: { code: string; message: string } } | null;
}

export type DeviceMessage = { type: string } & Record<string, unknown>;

export interface DeviceEvents {
  connecting: { attempt: number; url: string };
  /** The server accepted the upgrade; hello was sent. */
  open: { url: string };
  /** The server answered hello with welcome. */
  connected: Welcome;
  /** A connection that had opened closed (1006: dropped without a close frame). */
  disconnected: { code: number; reason: string };
  /** The next attempt is scheduled. */
  reconnecting: { attempt: number; delayMs: number };
  /** The upgrade was refused with 401 (`message` is the server's, e.g. "Invalid device credentials"). */
  authFailed: AuthFailure;
  error: Error;
  /** A command was received and (unless an override held it) answered. */
  command: CommandRecord;
  /** The server reported a problem with a frame the device sent. */
  serverError: { code: string; message: string; id?: number };
  /** A frame the device sent (parsed back; sendRaw frames that are not JSON objects appear as {type:"raw"}). */
  sent: DeviceMessage;
  /** A frozen device dropped a ping or a frame from the server. */
  ignored: { what: "ping" | "frame" };
  /** No connection and none coming: after stop(), kill(), or with reconnect disabled. */
  idle: Record<string, never>;
}

/** Returned by a command override to leave the command unanswered (to test the server's timeout). */
export const noReply: unique symbol = Symbol("noReply");
