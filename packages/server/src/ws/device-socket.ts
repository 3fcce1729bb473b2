import type {} from "@fastify/websocket";
import { deviceCloseCodes, deviceSocketPath, maxFrameBytes } from "@sdk/protocol";
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { WebSocket } from "ws";
import { AppError } from "../errors.ts";
import type { DeviceAuth } from "../services/device-link.ts";
import type { Services } from "../services/index.ts";
import { FrameQueue } from "./frame-queue.ts";
import type { Heartbeat } from "./heartbeat.ts";
import { notAnUpgrade } from "./upgrade.ts";

declare module "fastify" {
  interface FastifyRequest {
    deviceAuth?: DeviceAuth;
  }
}

/**
 * Per device: reading its socket pauses while 1,024 frames (or 256 KB of them) wait to be handled,
 * and resumes at 256 frames (64 KB). With `maxFramesInFlight` writes committing besides, a device
 * holds at most about 0.8 MB of frames in the server (state values are at most 8 KB), plus the
 * socket's buffers.
 */
const frameQueueBounds = {
  highFrames: 1024,
  lowFrames: 256,
  highBytes: 256 * 1024,
  lowBytes: 64 * 1024,
};

/** `Authorization: Basic base64(deviceId:secret)`. */
function basicCredentials(request: FastifyRequest): { deviceId: string; secret: string } {
  const match = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(request.headers.authorization ?? "");
  const decoded = match ? Buffer.from(match[1]!, "base64").toString("utf8") : "";
  const colon = decoded.indexOf(":");
  if (colon <= 0) throw new AppError("invalid_device_credentials");
  return { deviceId: decoded.slice(0, colon), secret: decoded.slice(colon + 1) };
}

/** The device WebSocket: authenticates before the upgrade, then hands frames to the device link service. */
export function deviceSocket(app: FastifyInstance, services: Services, heartbeat: Heartbeat): void {
  app.route({
    method: "GET",
    url: deviceSocketPath,
    handler: notAnUpgrade,
    preValidation: async (request) => {
      const { deviceId, secret } = basicCredentials(request);
      request.deviceAuth = await services.deviceLink.authenticate(deviceId, secret);
    },
    wsHandler: (socket, request) => {
      // Keep nothing of the upgrade request alive: with thousands of idle boards, every byte per
      // connection counts (a request and its child logger are a few KB).
      openSession(request.deviceAuth!, socket);
    },
  });

  function openSession(auth: DeviceAuth, socket: WebSocket): void {
    const session = services.deviceLink.open(auth, {
      send: (text) => socket.send(text),
      close: (code, reason) => socket.close(code, reason),
    });
    let closeReason = "";
    let closeCode: number | undefined;
    const queue = new FrameQueue({
      ...frameQueueBounds,
      pause: () => socket.pause(),
      resume: () => socket.resume(),
      now: Date.now,
      onError: (error) => app.log.error({ err: error, deviceId: auth.deviceId }, "device frame failed"),
      onEpisode: (episode) => {
        app.log.warn({ deviceId: auth.deviceId, ...episode }, "device frames deferred (socket paused)");
        void session.backpressure(episode);
      },
    });
    heartbeat.track(socket, () => {
      closeReason = "heartbeat timeout";
    });
    socket.on("message", (data, isBinary) => {
      const bytes = (data as Buffer).length ?? 0;
      queue.push(bytes, () => (isBinary ? session.receiveBinary() : session.receive(data.toString())));
    });
    socket.on("error", (error: Error & { code?: string }) => {
      if (error.code !== "WS_ERR_UNSUPPORTED_MESSAGE_LENGTH") return;
      closeCode = deviceCloseCodes.tooBig;
      closeReason = `frame of ${maxFrameBytes / 1024} KB or more`;
      queue.push(0, () => session.refusedTooBig());
    });
    socket.on("close", (code, reason) => {
      // Offline at once, not after the frames still waiting (they are handled all the same).
      queue.closed();
      session
        .closed(closeCode ?? code, closeReason || reason.toString())
        .catch((error: unknown) =>
          app.log.error({ err: error, deviceId: auth.deviceId }, "device close failed"),
        );
    });
  }
}
