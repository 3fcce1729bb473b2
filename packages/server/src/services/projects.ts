import { idPrefixes, type Project } from "@sdk/protocol";
import { AppError } from "../errors.ts";
import type { EventBus } from "../events/bus.ts";
import type { Clock } from "../lib/clock.ts";
import { newId } from "../lib/ids.ts";
import type { Repositories } from "../repositories/index.ts";
import type { ProjectFiles } from "../storage/project-files.ts";
import { type Principal, viewerOf } from "./auth.ts";
import { projectView } from "./views.ts";

/** Devices that went with their project (or its owner): their connections and watchers close. */
export async function publishDeletedDevices(
  bus: EventBus,
  actorId: string,
  cause: "project" | "user",
  projectId: string,
  deviceIds: string[],
): Promise<void> {
  await Promise.all(
    deviceIds.map((deviceId) => bus.publish("device.deleted", { actorId, projectId, deviceId, cause })),
  );
}

export const projectNotFound = () => new AppError("not_found", "No such project");

/** Projects belong to their owner; admins see all. Anything else is answered as not found. */
export function projectsService(deps: {
  repos: Pick<Repositories, "projects" | "devices">;
  bus: EventBus;
  files: ProjectFiles;
  clock: Clock;
}) {
  const { repos, bus, files, clock } = deps;

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
      await bus.publish("project.created", { actorId: principal.user.id, projectId: row.id, name });
      return projectView(row);
    },

    async rename(principal: Principal, projectId: string, name: string): Promise<Project> {
      const row = await repos.projects.rename(viewerOf(principal), projectId, name, clock.now());
      if (!row) throw projectNotFound();
      await bus.publish("project.renamed", { actorId: principal.user.id, projectId, name });
      return projectView(row);
    },

    /** Devices, env vars and the rest go with it (foreign keys cascade), and so do its files. */
    async delete(principal: Principal, projectId: string): Promise<void> {
      const deviceIds = await repos.devices.idsInProjects([projectId]);
      if (!(await repos.projects.delete(viewerOf(principal), projectId))) throw projectNotFound();
      await publishDeletedDevices(bus, principal.user.id, "project", projectId, deviceIds);
      await files.remove(projectId);
      await bus.publish("project.deleted", { actorId: principal.user.id, projectId });
    },
  };
}
