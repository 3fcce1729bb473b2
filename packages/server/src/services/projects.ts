import { idPrefixes, type Project } from "@sdk/protocol";
import { AppError } from "../errors.ts";
import type { EventBus } from "../events/bus.ts";
import type { Clock } from "../lib/clock.ts";
import { newId } from "../lib/ids.ts";
import type { Repositories } from "../repositories/index.ts";
import type { ProjectFiles } from "../storage/project-files.ts";
import type { AuditService } from "./audit.ts";
import { type Principal, viewerOf } from "./auth.ts";
import { projectView } from "./views.ts";

/** Devices that went with their project: close their connections and their watchers. */
export function disconnectDeleted(bus: EventBus, projectId: string, deviceIds: string[]): void {
  for (const deviceId of deviceIds) {
    bus.publish({ kind: "revoked", projectId, deviceId, reason: "device deleted" });
    bus.publish({ kind: "deleted", projectId, deviceId });
  }
}

export const projectNotFound = () => new AppError("not_found", "No such project");

/** Projects belong to their owner; admins see all. Anything else is answered as not found. */
export function projectsService(deps: {
  repos: Pick<Repositories, "projects" | "devices">;
  audit: AuditService;
  bus: EventBus;
  files: ProjectFiles;
  clock: Clock;
}) {
  const { repos, audit, bus, files, clock } = deps;

  return {
    list: async (principal: Principal): Promise<Project[]> =>
      (await repos.projects.listVisible(viewerOf(principal))).map(projectView),

    async get(principal: Principal, projectId: string): Promise<Project> {
      const row = await repos.projects.findVisible(viewerOf(principal), projectId);
      if (!row) throw projectNotFound();
      return projectView(row);
    },

    async create(principal: Principal, name: string): Promise<Project> {
      const now = clock.now();
      const row = {
        id: newId(idPrefixes.project),
        ownerId: principal.user.id,
        name,
        createdAt: now,
        updatedAt: now,
      };
      await repos.projects.insert(row);
      await audit.record({
        actorId: principal.user.id,
        action: "project.created",
        projectId: row.id,
        detail: { name },
      });
      return projectView(row);
    },

    async rename(principal: Principal, projectId: string, name: string): Promise<Project> {
      const row = await repos.projects.rename(viewerOf(principal), projectId, name, clock.now());
      if (!row) throw projectNotFound();
      await audit.record({
        actorId: principal.user.id,
        action: "project.renamed",
        projectId,
        detail: { name },
      });
      return projectView(row);
    },

    /** Devices, env vars and the rest go with it (foreign keys cascade), and so do its files. */
    async delete(principal: Principal, projectId: string): Promise<void> {
      const deviceIds = await repos.devices.idsInProjects([projectId]);
      if (!(await repos.projects.delete(viewerOf(principal), projectId))) throw projectNotFound();
      disconnectDeleted(bus, projectId, deviceIds);
      await files.remove(projectId);
      await audit.record({ actorId: principal.user.id, action: "project.deleted", projectId });
    },
  };
}
export type ProjectsService = ReturnType<typeof projectsService>;
