import type {} from "@fastify/websocket";
import { bearerSubprotocolPrefix, type WatchEvent, watchCloseCodes, watchPath } from "@sdk/protocol";
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { WebSocket } from "ws";
import { AppError } from "../errors.ts";
import type { DeviceEvent } from "../events/bus.ts";
import { authenticate } from "../http/authenticate.ts";
import { isOwnOrigin } from "../http/cross-site.ts";
import { type Principal, revokes } from "../services/auth.ts";
import type { Services } from "../services/index.ts";
import type { Heartbeat } from "./heartbeat.ts";
import { notAnUpgrade } from "./upgrade.ts";

declare module "fastify" {
  interface FastifyRequest {
    watcher?: Principal;
  }
}

/** Past this many bytes waiting to be sent, events are dropped and a `lagged` notice follows. */
const watchBufferLimitBytes = 256 * 1024;
/** A watcher that misses this many events in a row is closed (4008). */
const watchMaxDropped = 10_000;

/** An API token as a sub-protocol (`bearer.<token>`), for browsers, which cannot set headers. */
function subprotocolToken(request: FastifyRequest): string | undefined {
  const offered = String(request.headers["sec-websocket-protocol"] ?? "")
    .split(",")
    .map((p) => p.trim());
  return offered.find((p) => p.startsWith(bearerSubprotocolPrefix))?.slice(bearerSubprotocolPrefix.length);
}

async function authenticateWatcher(
  request: FastifyRequest,
  services: Services,
  publicUrl: string | null,
): Promise<Principal> {
  const token = subprotocolToken(request);
  if (token && request.headers.authorization === undefined) {
    const principal = await services.auth.authenticateToken(token);
    if (!principal) throw new AppError("invalid_token", "Invalid or revoked API token");
    return principal;
  }
  const principal = await authenticate(request, services.auth);
  // A browser sends the session cookie with a WebSocket from any site: accept only our own pages.
  const origin = request.headers.origin;
  if (principal.via === "session" && origin !== undefined && !isOwnOrigin(request, publicUrl, origin)) {
    throw new AppError("cross_site_request");
  }
  return principal;
}

type Unsequenced = WatchEvent extends infer E ? (E extends WatchEvent ? Omit<E, "seq"> : never) : never;

function toWatchEvent({ type, payload }: DeviceEvent): Unsequenced | undefined {
  switch (type) {
    case "device.connected":
      return { type: "status", at: new Date(payload.at).toISOString(), status: "online" };
    case "device.disconnected":
      return {
        type: "status",
        at: new Date(payload.at).toISOString(),
        status: "offline",
        ...(payload.reason ? { reason: payload.reason } : {}),
      };
    case "device.log":
      return { type: "log", at: payload.entry.at, entry: payload.entry };
    case "device.state":
      return {
        type: "state",
        at: new Date(payload.at).toISOString(),
        entityId: payload.entityId,
        value: payload.value,
      };
    case "device.pins":
      return { type: "pins", at: new Date(payload.at).toISOString(), pins: payload.pins };
    default:
      return undefined;
  }
}

/** The watch WebSocket: a snapshot, then the device's live status, log and state events. */
export function watchSocket(
  app: FastifyInstance,
  services: Services,
  heartbeat: Heartbeat,
  publicUrl: string | null,
): void {
  app.route<{ Params: { projectId: string; deviceId: string } }>({
    method: "GET",
    url: watchPath,
    handler: notAnUpgrade,
    preValidation: async (request) => {
      const principal = await authenticateWatcher(request, services, publicUrl);
      await services.watch.authorize(principal, request.params);
      request.watcher = principal;
    },
    wsHandler: (socket, request) => {
      const device = { projectId: request.params.projectId, deviceId: request.params.deviceId };
      let seq = 0;
      let dropped = 0;
      let ready = false;
      const early: DeviceEvent[] = [];

      const sendNow = (event: Unsequenced) => socket.send(JSON.stringify({ ...event, seq: ++seq }));
      const deliver = (event: DeviceEvent) => {
        if (event.type === "device.deleted") return socket.close(watchCloseCodes.gone, "device deleted");
        const watchEvent = toWatchEvent(event);
        if (!watchEvent || socket.readyState !== socket.OPEN) return;
        if (socket.bufferedAmount > watchBufferLimitBytes) {
          dropped++;
          if (dropped >= watchMaxDropped) socket.close(watchCloseCodes.tooSlow, "watcher too slow");
          return;
        }
        if (dropped > 0) {
          sendNow({ type: "lagged", at: new Date().toISOString(), dropped });
          dropped = 0;
        }
        sendNow(watchEvent);
      };

      const unsubscribe = services.watch.subscribe(device.deviceId, (event) => {
        if (ready) deliver(event);
        else early.push(event);
      });
      // A revoked token, an ended session or lost access ends the stream too.
      const principal = request.watcher!;
      const unwatchRevocations = services.watch.onRevoked((revocation) => {
        if (revokes(revocation, principal)) socket.close(watchCloseCodes.revoked, "credentials revoked");
      });
      heartbeat.track(socket as WebSocket, () => {});
      socket.on("close", () => {
        unsubscribe();
        unwatchRevocations();
      });
      socket.on("message", () => {}); // watchers have nothing to say; frames only count as signs of life

      services.watch.snapshot(request.watcher!, device).then(
        (snapshot) => {
          if (socket.readyState !== socket.OPEN) return;
          sendNow({ type: "snapshot", at: new Date().toISOString(), ...snapshot });
          ready = true;
          for (const event of early.splice(0)) deliver(event);
        },
        (error: unknown) => {
          request.log.warn({ err: error }, "watch snapshot failed");
          socket.close(watchCloseCodes.gone, "device not available");
        },
      );
    },
  });
}
