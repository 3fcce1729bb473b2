import { createHash } from "node:crypto";
import {
  type Deployment,
  type DeploymentManifest,
  type DeploymentSource,
  type EntityConfig,
  idPrefixes,
  type RolloutOptions,
  StoredDeploymentManifest,
} from "@sdk/protocol";
import { ScriptLoadError } from "@sdk/sandbox";
import { AppError } from "../errors.ts";
import type { EventBus } from "../events/bus.ts";
import type { Clock } from "../lib/clock.ts";
import { newSortableId } from "../lib/ids.ts";
import type { DeploymentRow } from "../repositories/deployments.ts";
import type { Repositories } from "../repositories/index.ts";
import type { ProjectFiles } from "../storage/project-files.ts";
import { type Principal, viewerOf } from "./auth.ts";
import { DeployThrottle, deployFailuresAllowed } from "./deploy-throttle.ts";
import { projectNotFound } from "./projects.ts";
import type { RolloutsService } from "./rollouts.ts";
import { CrashLoopError } from "./script-canary.ts";
import type { ScriptHostService } from "./script-host.ts";
import { iso } from "./views.ts";

/** What the build adds to every script (the library, its generated entry): not the user's code. */
const librarySource = /(^|\/)(packages\/(device|protocol)\/src\/|node_modules\/@sdk\/)|^sdk-entry\.js$/;

/** The user's files from a source map's `sourcesContent`, paths relative to the project. */
function sourcesOf(sourceMap: string | undefined): DeploymentSource {
  if (!sourceMap) return { files: [] };
  let map: { sources?: unknown; sourcesContent?: unknown };
  try {
    map = JSON.parse(sourceMap);
  } catch {
    return { files: [] };
  }
  const sources = Array.isArray(map.sources) ? map.sources : [];
  const contents = Array.isArray(map.sourcesContent) ? map.sourcesContent : [];
  return {
    files: sources.flatMap((source, i) => {
      const text = contents[i];
      if (typeof source !== "string" || typeof text !== "string") return [];
      const path = source.replace(/^(\.\.?\/)+/, "");
      return librarySource.test(path) ? [] : [{ path, text }];
    }),
  };
}

const fileSafe = (name: string) => name.replace(/[^A-Za-z0-9._-]+/g, "-").replace(/^-+|-+$/g, "") || "script";

const viewWith = (row: DeploymentRow, rollout: Deployment["rollout"]): Deployment => ({
  id: row.id,
  projectId: row.projectId,
  version: row.version,
  status: row.status,
  sha256: row.sha256,
  manifest: StoredDeploymentManifest.parse(JSON.parse(row.manifest)),
  error: row.error,
  createdBy: row.createdBy,
  createdAt: iso(row.createdAt),
  activatedAt: row.activatedAt === null ? null : iso(row.activatedAt),
  rollout,
});

/** Uploading a built script, checking that it loads, making it live, and rolling back. */
export function deploymentsService(deps: {
  repos: Pick<Repositories, "projects" | "deployments">;
  files: ProjectFiles;
  scripts: ScriptHostService;
  rollouts: RolloutsService;
  bus: EventBus;
  clock: Clock;
  /** How many deployments each project keeps (the live one is always kept). */
  kept: number;
  onError: (error: unknown) => void;
}) {
  const { repos, files, scripts, rollouts, bus, clock, kept, onError } = deps;
  const view = (row: DeploymentRow) => viewWith(row, rollouts.view(row));
  const throttle = new DeployThrottle(clock);
  bus.subscribe("project.deleted", (e) => throttle.forget(e.projectId), { everywhere: true });

  async function visibleProject(principal: Principal, projectId: string) {
    if (!(await repos.projects.findVisible(viewerOf(principal), projectId))) throw projectNotFound();
  }

  /**
   * Loads the deployment, runs it for the connected devices, and commits it as the live one. A
   * script that does not load or stops itself while starting leaves it `failed` with the reason; any
   * other error fails a new (pending) deployment too, so none is left pending, and is rethrown.
   */
  async function goLive(
    principal: Principal,
    projectId: string,
    row: DeploymentRow,
    watch?: { rollback: boolean },
  ): Promise<DeploymentRow> {
    let activatedAt = 0;
    // Only whether there is one: the previous deployment itself is read in the script host's queue.
    const hasPrevious = (await repos.deployments.active(projectId)) !== undefined;
    rollouts.activating(projectId, row.id);
    const check = watch && rollouts.beginWatch(projectId, row.id, watch.rollback, hasPrevious);
    let previousId: string | null = null;
    try {
      previousId = await scripts.activate(
        projectId,
        row.id,
        async () => {
          activatedAt = clock.now();
          await repos.deployments.activate(projectId, row.id, activatedAt);
        },
        check,
      );
    } catch (error) {
      if (watch) rollouts.cancelWatch(projectId, row.id);
      if (error instanceof CrashLoopError) {
        const stayed = (await repos.deployments.active(projectId))?.id ?? null;
        await rollouts.rejectedAtTrial(principal.user.id, row, stayed, error.message);
        return (await repos.deployments.find(viewerOf(principal), projectId, row.id)) ?? row;
      }
      const scriptError = error instanceof ScriptLoadError;
      if (!scriptError && row.status !== "pending") throw error;
      const reason = scriptError
        ? error.message
        : "the server could not check this deployment (an internal error; the server log has the details); deploy it again";
      await repos.deployments.markFailed(row.id, reason);
      await bus.publish("deployment.failed", { actorId: principal.user.id, projectId, deploymentId: row.id });
      if (!scriptError) throw error;
      return { ...row, status: "failed", error: reason };
    }
    await bus.publish("deployment.activated", {
      actorId: principal.user.id,
      projectId,
      deploymentId: row.id,
      version: row.version,
    });
    if (watch) {
      await rollouts.watchLive(principal.user.id, { ...row, status: "active" }, previousId, watch.rollback);
      return (await repos.deployments.find(viewerOf(principal), projectId, row.id)) ?? row;
    }
    return { ...row, status: "active", error: null, activatedAt };
  }

  function refuseWhileThrottled(projectId: string) {
    const wait = throttle.retryAfterSeconds(projectId);
    if (wait === 0) return;
    const failures = throttle.failures(projectId);
    if (failures < deployFailuresAllowed)
      throw new AppError(
        "deploys_throttled",
        `${throttle.inProgress(projectId)} deploys of this project are still loading and ${failures} failed before them (after ${deployFailuresAllowed} failures in a row, deploys pause): try again in ${wait} s, when they have finished`,
        { headers: { "retry-after": String(wait) } },
      );
    throw new AppError(
      "deploys_throttled",
      `The last ${throttle.failures(projectId)} deploys of this project failed (after ${deployFailuresAllowed} in a row, deploys pause): try again in ${wait} s, after fixing the error shown on the last failed deployment`,
      { headers: { "retry-after": String(wait) } },
    );
  }

  /**
   * Keeps the newest `kept` deployments of the project and the live one; removes the rest, their
   * bundles (which go with their rows) and the files an older server stored them in.
   */
  async function prune(projectId: string) {
    const removed = await repos.deployments.prune(projectId, kept, rollouts.kept(projectId));
    for (const id of removed) await files.removeDeployment(projectId, id);
  }

  /** A deployment's bundle and source map, from the database. */
  async function bundleOf(deploymentId: string) {
    const stored = await repos.deployments.bundle(deploymentId);
    if (!stored) throw new Error(`deployment ${deploymentId} has no bundle stored`);
    return stored;
  }

  /**
   * Takes the project's rollout slot before any await (a canary and another deploy never overlap:
   * rollouts.take). A refusal answers 404 rather than 409 to whoever may not see the project.
   */
  async function takeSlot(principal: Principal, projectId: string, options: RolloutOptions) {
    try {
      return rollouts.take(projectId, options.canary !== undefined);
    } catch (error) {
      await visibleProject(principal, projectId);
      throw error;
    }
  }

  /** `create` once the rollout slot is taken. */
  async function createTaken(
    principal: Principal,
    projectId: string,
    input: { bundle: string; sourceMap?: string; manifest: DeploymentManifest },
    options: RolloutOptions,
  ): Promise<Deployment> {
    await visibleProject(principal, projectId);
    const members = options.canary && (await rollouts.members(principal, projectId, options.canary));
    refuseWhileThrottled(projectId);
    throttle.started(projectId); // no await since the check: parallel deploys count
    try {
      const now = clock.now();
      const sha256 = createHash("sha256").update(input.bundle).digest("hex");
      if (input.manifest.sha256 && input.manifest.sha256 !== sha256) {
        throw new AppError(
          "invalid_request",
          "Invalid request: manifest.sha256 does not match the bundle (was it changed after the build?)",
        );
      }
      const id = newSortableId(idPrefixes.deployment, now);
      const row = await repos.deployments.insert(
        {
          id,
          projectId,
          status: "pending",
          sha256,
          manifest: JSON.stringify({ ...input.manifest, sha256 }),
          error: null,
          createdBy: principal.user.id,
          createdAt: now,
          activatedAt: null,
        },
        { bundle: input.bundle, ...(input.sourceMap === undefined ? {} : { sourceMap: input.sourceMap }) },
      );
      await bus.publish("deployment.created", {
        actorId: principal.user.id,
        projectId,
        deploymentId: id,
        version: row.version,
      });
      let result: DeploymentRow;
      try {
        result =
          options.canary && members
            ? await rollouts.startCanary(
                principal,
                projectId,
                row,
                { ...options, canary: options.canary },
                members,
              )
            : await goLive(principal, projectId, row, { rollback: options.rollback ?? true });
      } catch (error) {
        // A canary started by another request while this one uploaded: none is left pending.
        if (error instanceof AppError && error.code === "rollout_in_progress")
          await repos.deployments.markFailed(row.id, `not deployed: ${error.message}`);
        throw error;
      } finally {
        await prune(projectId).catch(onError);
      }
      if (result.status === "failed" || result.status === "rolled_back") throttle.failed(projectId);
      else throttle.succeeded(projectId);
      return view(result);
    } finally {
      throttle.ended(projectId);
    }
  }

  /** `activate` once the rollout slot is taken. */
  async function activateTaken(
    principal: Principal,
    projectId: string,
    deploymentId: string,
    options: RolloutOptions,
  ): Promise<Deployment> {
    const row = await repos.deployments.find(viewerOf(principal), projectId, deploymentId);
    if (!row) throw new AppError("not_found", "No such deployment");
    if (row.status === "failed")
      throw new AppError("conflict", `Deployment ${row.version} failed to load; it cannot go live`);
    if (row.status === "active" || row.status === "canary") return view(row);
    if (options.canary) {
      const members = await rollouts.members(principal, projectId, options.canary);
      const started = await rollouts.startCanary(
        principal,
        projectId,
        row,
        { ...options, canary: options.canary },
        members,
      );
      if (started.status === "failed")
        throw new AppError("conflict", `Deployment ${row.version} no longer loads: ${started.error}`);
      return view(started);
    }
    const result = await goLive(principal, projectId, row);
    if (result.status === "failed")
      throw new AppError("conflict", `Deployment ${row.version} no longer loads: ${result.error}`);
    return view(result);
  }

  return {
    /**
     * At boot: deployments still pending from before this process started were cut off mid-check
     * by a stop or crash; they are failed, so none stays pending forever. And the bundles an older
     * server stored only on disk (`DATA_DIR/projects/…`) are copied into the database, where every
     * instance reads them (`importBundles`).
     */
    async recoverInterrupted(processStartedAt: number): Promise<void> {
      await repos.deployments.failInterrupted(processStartedAt);
      await this.importBundles();
    },

    /**
     * Copies into the database the bundles of deployments still only on disk; idempotent (a bundle
     * already stored is kept, one missing on disk too is left out). Returns how many were copied.
     */
    async importBundles(): Promise<number> {
      let copied = 0;
      for (const { id, projectId } of await repos.deployments.withoutBundle()) {
        const found = await files.readDeployment(projectId, id);
        if (!found) continue;
        await repos.deployments.importBundle(id, found);
        copied++;
      }
      return copied;
    },

    async list(principal: Principal, projectId: string): Promise<Deployment[]> {
      await visibleProject(principal, projectId);
      return (await repos.deployments.list(viewerOf(principal), projectId)).map(view);
    },

    async get(principal: Principal, projectId: string, deploymentId: string): Promise<Deployment> {
      const row = await repos.deployments.find(viewerOf(principal), projectId, deploymentId);
      if (!row) throw new AppError("not_found", "No such deployment");
      return view(row);
    },

    /** The deployment's source files, from the source map stored with it. */
    async source(principal: Principal, projectId: string, deploymentId: string): Promise<DeploymentSource> {
      const row = await repos.deployments.find(viewerOf(principal), projectId, deploymentId);
      if (!row) throw new AppError("not_found", "No such deployment");
      return sourcesOf((await bundleOf(row.id)).sourceMap);
    },

    /** The bundle as deployed, with a file name made of the project's name and the version. */
    async bundle(
      principal: Principal,
      projectId: string,
      deploymentId: string,
    ): Promise<{ bytes: Uint8Array; filename: string }> {
      const project = await repos.projects.findVisible(viewerOf(principal), projectId);
      const row = project && (await repos.deployments.find(viewerOf(principal), projectId, deploymentId));
      if (!project || !row) throw new AppError("not_found", "No such deployment");
      const { bundle } = await bundleOf(row.id);
      return {
        bytes: new TextEncoder().encode(bundle),
        filename: `${fileSafe(project.name)}-v${row.version}.js`,
      };
    },

    /**
     * Stores the bundle, loads it in a sandbox, and makes it live. A bundle that fails to load is
     * recorded as `failed` with the error, and the previous deployment stays live.
     */
    async create(
      principal: Principal,
      projectId: string,
      input: { bundle: string; sourceMap?: string; manifest: DeploymentManifest; rollout?: RolloutOptions },
    ): Promise<Deployment> {
      const options = input.rollout ?? {};
      const release = await takeSlot(principal, projectId, options);
      try {
        return await createTaken(principal, projectId, input, options);
      } finally {
        release();
      }
    },

    /** Rollback: makes an earlier (not failed) deployment live again, at once or as a canary. */
    async activate(
      principal: Principal,
      projectId: string,
      deploymentId: string,
      options: RolloutOptions = {},
    ): Promise<Deployment> {
      const release = await takeSlot(principal, projectId, options);
      try {
        return await activateTaken(principal, projectId, deploymentId, options);
      } finally {
        release();
      }
    },

    /** Ends a canary in its window now: it goes live on every device. 409 unless it is one. */
    async promote(principal: Principal, projectId: string, deploymentId: string): Promise<Deployment> {
      await rollouts.decideByHand(principal, projectId, deploymentId, true);
      return this.get(principal, projectId, deploymentId);
    },

    /** Ends a canary in its window now: its devices go back to the stable version. 409 unless it is one. */
    async rollBack(principal: Principal, projectId: string, deploymentId: string): Promise<Deployment> {
      await rollouts.decideByHand(principal, projectId, deploymentId, false);
      return this.get(principal, projectId, deploymentId);
    },

    /** The Home Assistant entities of the live deployment. */
    async entities(principal: Principal, projectId: string): Promise<EntityConfig[]> {
      await visibleProject(principal, projectId);
      const active = await repos.deployments.active(projectId);
      return active ? StoredDeploymentManifest.parse(JSON.parse(active.manifest)).entities : [];
    },
  };
}
