import { createHash } from "node:crypto";
import { type Deployment, DeploymentManifest, type EntityConfig, idPrefixes } from "@sdk/protocol";
import { ScriptLoadError } from "@sdk/sandbox";
import { AppError } from "../errors.ts";
import type { EventBus } from "../events/bus.ts";
import type { Clock } from "../lib/clock.ts";
import { newSortableId } from "../lib/ids.ts";
import type { DeploymentRow } from "../repositories/deployments.ts";
import type { Repositories } from "../repositories/index.ts";
import type { ProjectFiles } from "../storage/project-files.ts";
import { type Principal, viewerOf } from "./auth.ts";
import { projectNotFound } from "./projects.ts";
import type { ScriptHostService } from "./script-host.ts";
import { iso } from "./views.ts";

const view = (row: DeploymentRow): Deployment => ({
  id: row.id,
  projectId: row.projectId,
  version: row.version,
  status: row.status,
  sha256: row.sha256,
  manifest: DeploymentManifest.parse(JSON.parse(row.manifest)),
  error: row.error,
  createdBy: row.createdBy,
  createdAt: iso(row.createdAt),
  activatedAt: row.activatedAt === null ? null : iso(row.activatedAt),
});

/** Uploading a built script, checking that it loads, making it live, and rolling back. */
export function deploymentsService(deps: {
  repos: Pick<Repositories, "projects" | "deployments">;
  files: ProjectFiles;
  scripts: ScriptHostService;
  bus: EventBus;
  clock: Clock;
}) {
  const { repos, files, scripts, bus, clock } = deps;

  async function visibleProject(principal: Principal, projectId: string) {
    if (!(await repos.projects.findVisible(viewerOf(principal), projectId))) throw projectNotFound();
  }

  async function goLive(principal: Principal, projectId: string, row: DeploymentRow): Promise<DeploymentRow> {
    try {
      await scripts.activate(projectId, row.id);
    } catch (error) {
      if (!(error instanceof ScriptLoadError)) throw error;
      await repos.deployments.markFailed(row.id, error.message);
      await bus.publish("deployment.failed", { actorId: principal.user.id, projectId, deploymentId: row.id });
      return { ...row, status: "failed", error: error.message };
    }
    const now = clock.now();
    await repos.deployments.activate(projectId, row.id, now);
    await bus.publish("deployment.activated", {
      actorId: principal.user.id,
      projectId,
      deploymentId: row.id,
      version: row.version,
    });
    return { ...row, status: "active", error: null, activatedAt: now };
  }

  return {
    /** At boot: deployments cut off mid-check are failed, so none stays pending forever. */
    recoverInterrupted: () => repos.deployments.failInterrupted(),

    async list(principal: Principal, projectId: string): Promise<Deployment[]> {
      await visibleProject(principal, projectId);
      return (await repos.deployments.list(viewerOf(principal), projectId)).map(view);
    },

    async get(principal: Principal, projectId: string, deploymentId: string): Promise<Deployment> {
      const row = await repos.deployments.find(viewerOf(principal), projectId, deploymentId);
      if (!row) throw new AppError("not_found", "No such deployment");
      return view(row);
    },

    /**
     * Stores the bundle, loads it in a sandbox, and makes it live. A bundle that fails to load is
     * recorded as `failed` with the error, and the previous deployment stays live.
     */
    async create(
      principal: Principal,
      projectId: string,
      input: { bundle: string; sourceMap?: string; manifest: DeploymentManifest },
    ): Promise<Deployment> {
      await visibleProject(principal, projectId);
      const now = clock.now();
      const sha256 = createHash("sha256").update(input.bundle).digest("hex");
      if (input.manifest.sha256 && input.manifest.sha256 !== sha256) {
        throw new AppError(
          "invalid_request",
          "Invalid request: manifest.sha256 does not match the bundle (was it changed after the build?)",
        );
      }
      const id = newSortableId(idPrefixes.deployment, now);
      await files.writeDeployment(projectId, id, { bundle: input.bundle, sourceMap: input.sourceMap });
      const row = await repos.deployments.insert({
        id,
        projectId,
        status: "pending",
        sha256,
        manifest: JSON.stringify({ ...input.manifest, sha256 }),
        error: null,
        createdBy: principal.user.id,
        createdAt: now,
        activatedAt: null,
      });
      await bus.publish("deployment.created", {
        actorId: principal.user.id,
        projectId,
        deploymentId: id,
        version: row.version,
      });
      return view(await goLive(principal, projectId, row));
    },

    /** Rollback: makes an earlier (not failed) deployment live again. */
    async activate(principal: Principal, projectId: string, deploymentId: string): Promise<Deployment> {
      const row = await repos.deployments.find(viewerOf(principal), projectId, deploymentId);
      if (!row) throw new AppError("not_found", "No such deployment");
      if (row.status === "failed")
        throw new AppError("conflict", `Deployment ${row.version} failed to load; it cannot go live`);
      if (row.status === "active") return view(row);
      const result = await goLive(principal, projectId, row);
      if (result.status === "failed")
        throw new AppError("conflict", `Deployment ${row.version} no longer loads: ${result.error}`);
      return view(result);
    },

    /** The Home Assistant entities of the live deployment. */
    async entities(principal: Principal, projectId: string): Promise<EntityConfig[]> {
      await visibleProject(principal, projectId);
      const active = await repos.deployments.active(projectId);
      return active ? DeploymentManifest.parse(JSON.parse(active.manifest)).entities : [];
    },
  };
}
