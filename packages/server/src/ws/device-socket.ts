import { type IncomingMessage, STATUS_CODES } from "node:http";
import type { Duplex } from "node:stream";
import { deviceCloseCodes, deviceSocketPath, errorDocsPath, maxFrameBytes } from "@sdk/protocol";
import type { FastifyInstance } from "fastify";
import { type RawData, WebSocket, WebSocketServer } from "ws";
import { AppError, isDatabaseUnavailable } from "../errors.ts";
import type { DeviceAuth, LinkSession, Transport } from "../services/device-link.ts";
import type { Services } from "../services/index.ts";
import { FrameQueue, type FrameQueueBounds, type FrameQueueHandler } from "./frame-queue.ts";
import type { Heartbeat, HeartbeatEntry } from "./heartbeat.ts";
import { notAnUpgrade, refuseMalformedHandshakes } from "./upgrade.ts";

/**
 * Per device: reading its socket pauses while 1,024 frames (or 256 KB of them) wait to be handled,
 * and resumes at 256 frames (64 KB). With `maxFramesInFlight` writes committing besides, a device
 * holds at most about 0.8 MB of frames in the server (state values are at most 8 KB), plus the
 * socket's buffers.
 */
const frameQueueBounds: FrameQueueBounds = {
  highFrames: 1024,
  lowFrames: 256,
  highBytes: 256 * 1024,
  lowBytes: 64 * 1024,
  now: Date.now,
};

/**
 * Frames from the server to a device that has not read them yet (in the server's socket buffers):
 * above this, sends and commands fail with `device_not_reading`; still above it after
 * `overfullCloseMs`, the connection is closed.
 */
const maxUnsentBytes = 256 * 1024;
const overfullCloseMs = 10_000;

/**
 * What one device connection needs from its socket: the session's transport, the frame queue's
 * handler and the heartbeat's entry in one object (not a closure each: idle boards are many).
 */
class Connection implements Transport, FrameQueueHandler, HeartbeatEntry {
  readonly socket: WebSocket;
  readonly deviceId: string;
  readonly #app: FastifyInstance;
  session!: LinkSession;
  /** The connection's frame queue (what the heartbeat watches for progress). */
  progress!: FrameQueue;
  alive = true;
  missed = 0;
  stalled = 0;
  handled = 0;
  closeReason = "";
  closeCode: number | undefined;
  /** Only while the device is behind on reading what the server sent. */
  #overfull: NodeJS.Timeout | undefined;

  constructor(socket: WebSocket, deviceId: string, app: FastifyInstance) {
    this.socket = socket;
    this.deviceId = deviceId;
    this.#app = app;
  }

  send(text: string): void {
    const socket = this.socket;
    if (socket.bufferedAmount > maxUnsentBytes) {
      this.#watchOverfull();
      throw new AppError(
        "device_not_reading",
        `the device has not read ${Math.round(socket.bufferedAmount / 1024)} KB the server sent (limit ${maxUnsentBytes / 1024} KB)`,
      );
    }
    socket.send(text);
    if (socket.bufferedAmount > maxUnsentBytes) this.#watchOverfull();
  }

  /** Closes the connection if the device is still that far behind after `overfullCloseMs`. */
  #watchOverfull(): void {
    if (this.#overfull) return;
    this.#overfull = setTimeout(() => {
      this.#overfull = undefined;
      const socket = this.socket;
      if (socket.bufferedAmount <= maxUnsentBytes || socket.readyState !== socket.OPEN) return;
      this.closeCode = deviceCloseCodes.policyViolation;
      this.closeReason = `not reading: ${Math.round(socket.bufferedAmount / 1024)} KB unsent for ${overfullCloseMs / 1000}s`;
      this.#app.log.warn({ deviceId: this.deviceId, reason: this.closeReason }, "device closed");
      // A close frame would wait behind what the device does not read: drop the connection.
      socket.terminate();
    }, overfullCloseMs);
    this.#overfull.unref();
  }

  /** The heartbeat gives up on the socket (it is terminated next). */
  dead(reason: string): void {
    this.closeReason = reason;
  }

  /** The socket closed. */
  ended(): void {
    clearTimeout(this.#overfull);
    this.#overfull = undefined;
  }

  close(code: number, reason: string): void {
    this.socket.close(code, reason);
  }

  pause(): void {
    this.socket.pause();
  }

  resume(): void {
    this.socket.resume();
  }

  onError(error: unknown): void {
    this.#app.log.error({ err: error, deviceId: this.deviceId }, "device frame failed");
  }

  onEpisode(episode: { pauses: number; frames: number; ms: number }): void {
    this.#app.log.warn({ deviceId: this.deviceId, ...episode }, "device frames deferred (socket paused)");
    void this.session?.backpressure(episode);
  }
}

/** A device's socket knows its connection: the socket's listeners are shared, not closures per socket. */
class DeviceWebSocket extends WebSocket {
  connection: Connection | undefined;
}

/** The connection of a device socket (set as it opens, before any listener runs). */
function connectionOf(socket: WebSocket): Connection {
  return (socket as DeviceWebSocket).connection!;
}

/** `Authorization: Basic base64(deviceId:secret)`. */
function basicCredentials(request: IncomingMessage): { deviceId: string; secret: string } {
  const match = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(request.headers.authorization ?? "");
  const decoded = match ? Buffer.from(match[1]!, "base64").toString("utf8") : "";
  const colon = decoded.indexOf(":");
  if (colon <= 0) throw new AppError("invalid_device_credentials");
  return { deviceId: decoded.slice(0, colon), secret: decoded.slice(colon + 1) };
}

export interface DeviceSocketServer {
  /** Closes every device socket still open (also those that never said hello). */
  closeAll(code: number, reason: string): void;
}

/**
 * The device WebSocket, on a plain `ws` server (no framework request per connection: with
 * thousands of idle boards every byte per connection counts, and reconnect storms want the upgrade
 * cheap). It authenticates before the upgrade, then hands frames to the device link service. A plain
 * GET (no Upgrade) still goes through the framework and gets 426.
 */
export function deviceSocket(
  app: FastifyInstance,
  services: Services,
  heartbeat: Heartbeat,
  publicUrl: string | null,
): DeviceSocketServer {
  app.get(deviceSocketPath, notAnUpgrade);
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: maxFrameBytes - 1,
    perMessageDeflate: false,
    WebSocket: DeviceWebSocket,
    // The device link knows every connection (closeAll): no second set, nor a close listener per socket.
    clientTracking: false,
    handleProtocols: () => false, // the device protocol has no subprotocol: never pick one offered
  });
  refuseMalformedHandshakes(wss, publicUrl);
  /**
   * Each device's latest frame queue. A new connection handles its frames only once the previous
   * connection's backlog has been handled, so an older value never ends up latest after a reconnect.
   */
  const latestQueues = new Map<string, FrameQueue>();

  // Device upgrades are taken before the framework sees them; every other upgrade (the watch
  // sockets) goes where it went before.
  const others = app.server.listeners("upgrade") as ((...args: unknown[]) => void)[];
  app.server.removeAllListeners("upgrade");
  app.server.on("upgrade", (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    const path = request.url?.split("?")[0];
    if (path === deviceSocketPath && request.method === "GET") {
      void upgradeDevice(request, socket, head);
      return;
    }
    for (const listener of others) listener.call(app.server, request, socket, head);
  });

  async function upgradeDevice(request: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    // Stopping (devices were told 1012 and retry within a second): as if the port were closed, so
    // the device keeps retrying within its hint instead of connecting to a server on its way out.
    if (!services.deviceLink.accepting()) {
      socket.destroy();
      return;
    }
    const guard = () => socket.destroy();
    socket.on("error", guard);
    let auth: DeviceAuth;
    try {
      const { deviceId, secret } = basicCredentials(request);
      auth = await services.deviceLink.authenticate(deviceId, secret);
    } catch (error) {
      socket.removeListener("error", guard);
      refuse(request, socket, error, publicUrl, app);
      return;
    }
    socket.removeListener("error", guard);
    if (socket.destroyed) return;
    wss.handleUpgrade(request, socket, head, (ws) => openSession(auth, ws as DeviceWebSocket));
  }

  // One listener of each kind for every device socket (`this` is the socket).
  function onMessage(this: WebSocket, data: RawData, isBinary: boolean): void {
    const { session, progress: queue } = connectionOf(this);
    const bytes = (data as Buffer).length ?? 0;
    queue.push(bytes, () => (isBinary ? session.receiveBinary() : session.receive(data.toString())));
  }
  function onError(this: WebSocket, error: Error & { code?: string }): void {
    if (error.code !== "WS_ERR_UNSUPPORTED_MESSAGE_LENGTH") return;
    const connection = connectionOf(this);
    connection.closeCode = deviceCloseCodes.tooBig;
    connection.closeReason = `frame of ${maxFrameBytes / 1024} KB or more`;
    connection.progress.push(0, () => connection.session.refusedTooBig());
  }
  function onClose(this: WebSocket, code: number, reason: Buffer): void {
    const connection = connectionOf(this);
    const { session, progress: queue } = connection;
    // Offline at once, not after the frames still waiting (they are handled all the same).
    queue.closed();
    connection.ended();
    void queue.idle().then(() => {
      if (latestQueues.get(connection.deviceId) === queue) latestQueues.delete(connection.deviceId);
    });
    session
      .closed(connection.closeCode ?? code, connection.closeReason || reason.toString())
      .catch((error: unknown) =>
        app.log.error({ err: error, deviceId: connection.deviceId }, "device close failed"),
      );
  }

  function openSession(auth: DeviceAuth, socket: DeviceWebSocket): void {
    const connection = new Connection(socket, auth.deviceId, app);
    connection.session = services.deviceLink.open(auth, connection);
    const queue = new FrameQueue(frameQueueBounds, connection);
    const previous = latestQueues.get(auth.deviceId);
    if (previous) queue.after(previous.idle());
    latestQueues.set(auth.deviceId, queue);
    connection.progress = queue;
    socket.connection = connection;
    heartbeat.trackEntry(socket, connection);
    socket.on("message", onMessage);
    socket.on("error", onError);
    socket.on("close", onClose);
  }

  return {
    closeAll(code, reason) {
      services.deviceLink.closeAll(code, reason);
    },
  };
}

/** The answer to a refused device upgrade, in the error envelope (401 for wrong credentials). */
function refuse(
  request: IncomingMessage,
  socket: Duplex,
  error: unknown,
  publicUrl: string | null,
  app: FastifyInstance,
): void {
  const appError =
    error instanceof AppError
      ? error
      : isDatabaseUnavailable(error)
        ? new AppError("database_unavailable")
        : new AppError("internal_error");
  if (appError.code === "internal_error" || appError.code === "database_unavailable")
    app.log.error({ err: error }, "device upgrade failed");
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const body = JSON.stringify({
    success: false,
    error: {
      code: appError.code,
      message: appError.message,
      docs: docsBase(request, publicUrl, appError.code),
    },
  });
  socket.end(
    [
      `HTTP/1.1 ${appError.status} ${STATUS_CODES[appError.status] ?? ""}`,
      "Connection: close",
      "Content-Type: application/json; charset=utf-8",
      `Content-Length: ${Buffer.byteLength(body)}`,
      ...Object.entries(appError.headers ?? {}).map(([name, value]) => `${name}: ${value}`),
      "",
      body,
    ].join("\r\n"),
  );
}

function docsBase(request: IncomingMessage, publicUrl: string | null, code: string): string {
  const encrypted = (request.socket as { encrypted?: boolean }).encrypted === true;
  const base = publicUrl ?? `${encrypted ? "https" : "http"}://${request.headers.host ?? "localhost"}`;
  return `${base}${errorDocsPath}#${code}`;
}
