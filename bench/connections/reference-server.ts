/**
 * The reference: a bare `ws` WebSocketServer speaking just enough of the device protocol for the
 * simulator (Basic auth header accepted unchecked, hello → welcome, a ping every HEARTBEAT_SECONDS,
 * two missed pongs drop the socket). No database, no logging, no framework: the ceiling for a Node
 * WebSocket server on this machine.
 *
 * Env: PORT (0 = any), HOST, HEARTBEAT_SECONDS. Prints `listening <port>` once ready.
 */
import type { IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { deviceCloseCodes, maxFrameBytes, restartCloseReason } from "@sdk/protocol/hardware";
import { type WebSocket, WebSocketServer } from "ws";
import { basicUser, welcomeFrame } from "../lib/reference-device.ts";

const heartbeatSeconds = Number(process.env.HEARTBEAT_SECONDS ?? 5);

const wss = new WebSocketServer({
  host: process.env.HOST ?? "127.0.0.1",
  port: Number(process.env.PORT ?? 0),
  path: "/v1/device",
  maxPayload: maxFrameBytes - 1,
  perMessageDeflate: false,
  verifyClient: (info: { req: IncomingMessage }) =>
    /^Basic\s+\S+$/i.test(info.req.headers.authorization ?? ""),
});

const missed = new Map<WebSocket, number>();

wss.on("connection", (socket, request) => {
  const deviceId = basicUser(request.headers.authorization);
  missed.set(socket, 0);
  socket.on("pong", () => missed.set(socket, 0));
  socket.on("message", (data) => {
    missed.set(socket, 0);
    let type: unknown;
    try {
      type = (JSON.parse(data.toString()) as { type?: unknown }).type;
    } catch {
      return;
    }
    if (type !== "hello") return;
    socket.send(welcomeFrame(deviceId, heartbeatSeconds));
  });
  socket.on("error", () => {});
  socket.on("close", () => missed.delete(socket));
});

const heartbeat = setInterval(() => {
  for (const [socket, count] of missed) {
    if (count >= 2) {
      missed.delete(socket);
      socket.terminate();
      continue;
    }
    missed.set(socket, count + 1);
    socket.ping();
  }
}, heartbeatSeconds * 1000);

wss.on("listening", () => {
  process.stdout.write(`listening ${(wss.address() as AddressInfo).port}\n`);
});

process.on("SIGTERM", () => {
  clearInterval(heartbeat);
  // As the sdk server: 1012 with the retry hint, so both lines measure the same device behaviour.
  for (const socket of wss.clients) socket.close(deviceCloseCodes.serviceRestart, restartCloseReason());
  wss.close(() => process.exit(0));
  setTimeout(() => process.exit(0), 5_000).unref();
});
