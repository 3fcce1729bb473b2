import { type EnvVar, envVarLimits } from "@sdk/protocol";
import { AppError } from "../errors.ts";
import type { Clock } from "../lib/clock.ts";
import type { SecretBox } from "../lib/secret-box.ts";
import type { Repositories } from "../repositories/index.ts";
import type { AuditService } from "./audit.ts";
import { type Principal, viewerOf } from "./auth.ts";
import { projectNotFound } from "./projects.ts";
import { iso } from "./views.ts";

/** Per-project environment variables, encrypted at rest; the values are bound to their project and name. */
export function envVarsService(deps: {
  repos: Pick<Repositories, "projects" | "envVars">;
  box: SecretBox;
  audit: AuditService;
  clock: Clock;
}) {
  const { repos, box, audit, clock } = deps;
  const context = (projectId: string, name: string) => `env:${projectId}:${name}`;
  const listeners = new Set<(projectId: string) => void>();
  const changed = (projectId: string) => {
    for (const listener of listeners) listener(projectId);
  };

  function decrypt(projectId: string, name: string, sealed: string): string {
    try {
      return box.open(sealed, context(projectId, name));
    } catch {
      throw new AppError(
        "internal_error",
        `The stored value of ${name} cannot be decrypted: DATA_DIR/secret.key is not the key it was written with`,
      );
    }
  }

  async function visibleProject(principal: Principal, projectId: string) {
    if (!(await repos.projects.findVisible(viewerOf(principal), projectId))) throw projectNotFound();
  }

  return {
    async list(principal: Principal, projectId: string): Promise<EnvVar[]> {
      await visibleProject(principal, projectId);
      const rows = await repos.envVars.list(viewerOf(principal), projectId);
      return rows.map((r) => ({
        name: r.name,
        value: decrypt(projectId, r.name, r.valueEncrypted),
        updatedAt: iso(r.updatedAt),
      }));
    },

    /** For the script host: name → value of every env var of a project. */
    async forScripts(projectId: string): Promise<Record<string, string>> {
      const rows = await repos.envVars.listForScripts(projectId);
      return Object.fromEntries(rows.map((r) => [r.name, decrypt(projectId, r.name, r.valueEncrypted)]));
    },

    /** Called after any change to a project's env vars. */
    onChange(listener: (projectId: string) => void): () => void {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },

    async set(principal: Principal, projectId: string, name: string, value: string): Promise<EnvVar> {
      await visibleProject(principal, projectId);
      if (
        !(await repos.envVars.exists(projectId, name)) &&
        (await repos.envVars.count(projectId)) >= envVarLimits.perProject
      ) {
        throw new AppError(
          "invalid_request",
          `A project can have at most ${envVarLimits.perProject} environment variables`,
        );
      }
      const updatedAt = clock.now();
      await repos.envVars.upsert({
        projectId,
        name,
        valueEncrypted: box.seal(value, context(projectId, name)),
        updatedAt,
      });
      changed(projectId);
      await audit.record({ actorId: principal.user.id, action: "env.set", projectId, detail: { name } });
      return { name, value, updatedAt: iso(updatedAt) };
    },

    async unset(principal: Principal, projectId: string, name: string): Promise<void> {
      await visibleProject(principal, projectId);
      if (!(await repos.envVars.delete(viewerOf(principal), projectId, name))) {
        throw new AppError("not_found", `No environment variable named ${name}`);
      }
      changed(projectId);
      await audit.record({ actorId: principal.user.id, action: "env.unset", projectId, detail: { name } });
    },
  };
}
export type EnvVarsService = ReturnType<typeof envVarsService>;
