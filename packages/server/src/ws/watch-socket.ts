import type {} from "@fastify/websocket";
import { DeviceWatchQuery, watchCloseCodes, watchPath } from "@sdk/protocol";
import type { FastifyInstance } from "fastify";
import type { WebSocket } from "ws";
import type { DeviceEvent } from "../events/bus.ts";
import { parseInput } from "../http/route.ts";
import type { Services } from "../services/index.ts";
import type { Heartbeat } from "./heartbeat.ts";
import { notAnUpgrade } from "./upgrade.ts";
import { authenticateWatcher } from "./watch-auth.ts";
import { toRecordEvent, toWatchEvent } from "./watch-events.ts";
import { serveWatcher } from "./watch-stream.ts";

/**
 * The watch WebSocket: a snapshot, then the device's live status, log and state events (the
 * spec's three kinds); `pins` events too with `?pins=true`; `message`, `command` and `send` events
 * with `?record=true` (`sdk record`).
 */
export function watchSocket(
  app: FastifyInstance,
  services: Services,
  heartbeat: Heartbeat,
  publicUrl: string | null,
): void {
  app.route<{ Params: { projectId: string; deviceId: string }; Querystring: unknown }>({
    method: "GET",
    url: watchPath,
    handler: notAnUpgrade,
    preValidation: async (request) => {
      const principal = await authenticateWatcher(request, services, publicUrl);
      parseInput(DeviceWatchQuery, request.query, "query");
      await services.watch.authorize(principal, request.params);
      request.watcher = principal;
    },
    wsHandler: (socket, request) => {
      const device = { projectId: request.params.projectId, deviceId: request.params.deviceId };
      const principal = request.watcher!;
      const { pins, record } = DeviceWatchQuery.parse(request.query);
      serveWatcher<DeviceEvent>(
        socket as WebSocket,
        { principal, services, heartbeat, log: request.log },
        {
          subscribe: (handler) => services.watch.subscribe(device.deviceId, handler),
          toFrame: (event) =>
            event.type === "device.deleted"
              ? { close: watchCloseCodes.gone, reason: "device deleted" }
              : event.type === "device.pins" && !pins
                ? undefined
                : (toWatchEvent(event) ?? (record ? toRecordEvent(event) : undefined)),
          snapshot: async () => ({
            type: "snapshot",
            at: new Date().toISOString(),
            ...(await services.watch.snapshot(principal, device)),
          }),
          snapshotFailed: "device not available",
        },
      );
    },
  });
}
