import type {} from "@fastify/websocket";
import {
  type ProjectWatchKind,
  ProjectWatchQuery,
  projectWatchDefaultKinds,
  projectWatchPath,
  watchCloseCodes,
} from "@sdk/protocol";
import type { FastifyInstance } from "fastify";
import type { WebSocket } from "ws";
import { parseInput } from "../http/route.ts";
import type { Services } from "../services/index.ts";
import type { ProjectEvent } from "../services/watch.ts";
import type { Heartbeat } from "./heartbeat.ts";
import { notAnUpgrade } from "./upgrade.ts";
import { authenticateWatcher } from "./watch-auth.ts";
import { toWatchEvent } from "./watch-events.ts";
import { serveWatcher } from "./watch-stream.ts";

declare module "fastify" {
  interface FastifyRequest {
    projectWatch?: ProjectWatchQuery;
  }
}

/** What a project watcher with these filters sees of an event (undefined: nothing). */
function projectFrame(event: ProjectEvent, devices: Set<string> | undefined, kinds: Set<ProjectWatchKind>) {
  if (event.type === "project.deleted") return { close: watchCloseCodes.gone, reason: "project deleted" };
  const { deviceId } = event.payload;
  if (devices && !devices.has(deviceId)) return undefined;
  if (event.type === "device.created")
    return {
      type: "device_created",
      at: new Date().toISOString(),
      deviceId,
      name: event.payload.name,
      board: event.payload.board,
    };
  if (event.type === "device.renamed")
    return { type: "device_renamed", at: new Date().toISOString(), deviceId, name: event.payload.name };
  if (event.type === "device.deleted")
    return { type: "device_deleted", at: new Date().toISOString(), deviceId };
  const frame = toWatchEvent(event);
  return frame && kinds.has(frame.type as ProjectWatchKind) ? { ...frame, deviceId } : undefined;
}

/** The project watch WebSocket: every device's snapshot, then their events, later devices included. */
export function projectWatchSocket(
  app: FastifyInstance,
  services: Services,
  heartbeat: Heartbeat,
  publicUrl: string | null,
): void {
  app.route<{ Params: { projectId: string } }>({
    method: "GET",
    url: projectWatchPath,
    handler: notAnUpgrade,
    preValidation: async (request) => {
      const principal = await authenticateWatcher(request, services, publicUrl);
      const filters = parseInput(ProjectWatchQuery, request.query, "query");
      await services.watch.authorizeProject(principal, request.params.projectId, filters.devices);
      request.watcher = principal;
      request.projectWatch = filters;
    },
    wsHandler: (socket, request) => {
      const { projectId } = request.params;
      const principal = request.watcher!;
      const filters = request.projectWatch!;
      const devices = filters.devices && new Set(filters.devices);
      const kinds = new Set<ProjectWatchKind>(filters.events ?? projectWatchDefaultKinds);
      serveWatcher<ProjectEvent>(
        socket as WebSocket,
        { principal, services, heartbeat, log: request.log },
        {
          subscribe: (handler) => services.watch.subscribeProject(principal, projectId, handler),
          toFrame: (event) => projectFrame(event, devices, kinds),
          snapshot: async () => ({
            type: "snapshot",
            at: new Date().toISOString(),
            devices: await services.watch.projectSnapshot(principal, projectId, filters.devices),
          }),
          snapshotFailed: "project not available",
        },
      );
    },
  });
}
