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

/**
 * A `?tags=` filter: which devices have one of the tags right now. It starts from the snapshot and
 * follows `device.tags_changed`, `device.created` (with tags) and `device.deleted`.
 */
class TagFilter {
  readonly #tags: Set<string>;
  readonly #members = new Set<string>();

  constructor(tags: string[]) {
    this.#tags = new Set(tags);
  }

  reset(deviceIds: string[]): void {
    this.#members.clear();
    for (const id of deviceIds) this.#members.add(id);
  }

  matches = (tags: string[] | undefined) => (tags ?? []).some((t) => this.#tags.has(t));

  /** Whether a device event reaches the watcher; membership follows tag changes. */
  admits(event: Exclude<ProjectEvent, { type: "project.deleted" }>): boolean {
    const { deviceId } = event.payload;
    const member = this.#members.has(deviceId);
    if (event.type === "device.created" || event.type === "device.tags_changed") {
      if (this.matches(event.payload.tags)) this.#members.add(deviceId);
      // a device that loses its last matching tag still gets this event, as its last one
      else this.#members.delete(deviceId);
      return member || this.#members.has(deviceId);
    }
    if (event.type === "device.deleted") this.#members.delete(deviceId);
    return member;
  }
}

/** What a project watcher with these filters sees of an event (undefined: nothing). */
function projectFrame(
  event: ProjectEvent,
  devices: Set<string> | undefined,
  kinds: Set<ProjectWatchKind>,
  tags: TagFilter | undefined,
) {
  if (event.type === "project.deleted") return { close: watchCloseCodes.gone, reason: "project deleted" };
  const { deviceId } = event.payload;
  if (devices && !devices.has(deviceId)) return undefined;
  if (tags && !tags.admits(event)) return undefined;
  if (event.type === "device.created")
    return {
      type: "device_created",
      at: new Date().toISOString(),
      deviceId,
      name: event.payload.name,
      board: event.payload.board,
      ...(event.payload.tags ? { tags: event.payload.tags } : {}),
    };
  if (event.type === "device.tags_changed")
    return { type: "device_tags", at: new Date().toISOString(), deviceId, tags: event.payload.tags };
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
      const tags = filters.tags && new TagFilter(filters.tags);
      serveWatcher<ProjectEvent>(
        socket as WebSocket,
        { principal, services, heartbeat, log: request.log },
        {
          subscribe: (handler) => services.watch.subscribeProject(principal, projectId, handler),
          toFrame: (event) => projectFrame(event, devices, kinds, tags),
          snapshot: async () => {
            const list = await services.watch.projectSnapshot(
              principal,
              projectId,
              filters.devices,
              filters.tags,
            );
            tags?.reset(list.map((d) => d.device.id));
            return { type: "snapshot", at: new Date().toISOString(), devices: list };
          },
          snapshotFailed: "project not available",
        },
      );
    },
  });
}
