import type {} from "@fastify/websocket";
import { deviceCloseCodes, deviceSocketPath, maxFrameBytes } from "@sdk/protocol";
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { WebSocket } from "ws";
import { AppError } from "../errors.ts";
import type { DeviceAuth } from "../services/device-link.ts";
import type { Services } from "../services/index.ts";
import type { Heartbeat } from "./heartbeat.ts";
import { notAnUpgrade } from "./upgrade.ts";

declare module "fastify" {
  interface FastifyRequest {
    deviceAuth?: DeviceAuth;
  }
}

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
    // Frames are handled one after another, in the order they arrived.
    let queue: Promise<void> = Promise.resolve();
    const enqueue = (work: () => Promise<void>) => {
      queue = queue
        .then(work)
        .catch((error: unknown) =>
          app.log.error({ err: error, deviceId: auth.deviceId }, "device frame failed"),
        );
    };
    heartbeat.track(socket, () => {
      closeReason = "heartbeat timeout";
    });
    socket.on("message", (data, isBinary) => {
      enqueue(() => (isBinary ? session.receiveBinary() : session.receive(data.toString())));
    });
    socket.on("error", (error: Error & { code?: string }) => {
      if (error.code !== "WS_ERR_UNSUPPORTED_MESSAGE_LENGTH") return;
      closeCode = deviceCloseCodes.tooBig;
      closeReason = `frame of ${maxFrameBytes / 1024} KB or more`;
      enqueue(() => session.refusedTooBig());
    });
    socket.on("close", (code, reason) => {
      enqueue(() => session.closed(closeCode ?? code, closeReason || reason.toString()));
    });
  }
}
