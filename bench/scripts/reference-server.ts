/**
 * The end-to-end reference: a bare `ws` server that does what the sdk server does for a device
 * message, minus the script, the database and the framework. A device frame is parsed; each
 * non-hello message becomes a `state` event (entity "v", value = the message's seq), serialised and
 * sent to that device's watchers. Device sockets: `/v1/device` (any Basic credentials, hello →
 * welcome). Watch sockets: `/v1/projects/:projectId/devices/:deviceId/watch` (not authenticated;
 * a snapshot first, then the events).
 *
 * Env: PORT (0 = any), HOST, HEARTBEAT_SECONDS. Prints `listening <port>` once ready.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { deviceCloseCodes, maxFrameBytes } from "@sdk/protocol/hardware";
import { type WebSocket, WebSocketServer } from "ws";
import { basicUser, welcomeFrame } from "../lib/reference-device.ts";

const heartbeatSeconds = Number(process.env.HEARTBEAT_SECONDS ?? 60);
const watchPath = /^\/v1\/projects\/([^/]+)\/devices\/([^/?]+)\/watch$/;

const server = http.createServer((_request, response) => response.writeHead(404).end());
const deviceSockets = new WebSocketServer({
  noServer: true,
  maxPayload: maxFrameBytes - 1,
  perMessageDeflate: false,
});
const watchSockets = new WebSocketServer({ noServer: true, perMessageDeflate: false });
/** The watchers of each device, with the seq of their last event. */
const watchers = new Map<string, Map<WebSocket, { seq: number }>>();

server.on("upgrade", (request, socket, head) => {
  const url = request.url ?? "";
  if (url === "/v1/device") {
    const deviceId = basicUser(request.headers.authorization);
    if (!deviceId) return void socket.destroy();
    deviceSockets.handleUpgrade(request, socket, head, (ws) => onDevice(ws, deviceId));
    return;
  }
  const watch = watchPath.exec(url);
  if (watch) {
    watchSockets.handleUpgrade(request, socket, head, (ws) => onWatcher(ws, watch[1]!, watch[2]!));
    return;
  }
  socket.destroy();
});

function onDevice(socket: WebSocket, deviceId: string): void {
  socket.on("message", (data) => {
    let message: { type?: unknown; seq?: unknown };
    try {
      message = JSON.parse(data.toString()) as typeof message;
    } catch {
      return;
    }
    if (message.type === "hello") {
      socket.send(welcomeFrame(deviceId, heartbeatSeconds));
      return;
    }
    const at = new Date().toISOString();
    for (const [watcher, state] of watchers.get(deviceId) ?? []) {
      watcher.send(
        JSON.stringify({ type: "state", at, entityId: "v", value: message.seq, seq: ++state.seq }),
      );
    }
  });
  socket.on("error", () => {});
}

function onWatcher(socket: WebSocket, projectId: string, deviceId: string): void {
  let forDevice = watchers.get(deviceId);
  if (!forDevice) {
    forDevice = new Map();
    watchers.set(deviceId, forDevice);
  }
  const state = { seq: 1 };
  forDevice.set(socket, state);
  socket.send(
    JSON.stringify({
      type: "snapshot",
      seq: 1,
      at: new Date().toISOString(),
      device: { id: deviceId, projectId },
      state: [],
    }),
  );
  socket.on("error", () => {});
  socket.on("close", () => {
    forDevice.delete(socket);
    if (forDevice.size === 0) watchers.delete(deviceId);
  });
}

const heartbeat = setInterval(() => {
  for (const socket of deviceSockets.clients) socket.ping();
  for (const socket of watchSockets.clients) socket.ping();
}, heartbeatSeconds * 1000);

server.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? "127.0.0.1", () => {
  process.stdout.write(`listening ${(server.address() as AddressInfo).port}\n`);
});

process.on("SIGTERM", () => {
  clearInterval(heartbeat);
  for (const socket of [...deviceSockets.clients, ...watchSockets.clients])
    socket.close(deviceCloseCodes.goingAway, "server shutting down");
  server.close(() => process.exit(0));
  setTimeout(() => process.exit(0), 5_000).unref();
});
