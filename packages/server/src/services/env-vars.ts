import { type EnvVar, envVarLimits } from "@sdk/protocol";
import { AppError } from "../errors.ts";
import type { EventBus } from "../events/bus.ts";
import type { Clock } from "../lib/clock.ts";
import type { SecretBox } from "../lib/secret-box.ts";
import type { Repositories } from "../repositories/index.ts";
import { type Principal, viewerOf } from "./auth.ts";
import { projectNotFound } from "./projects.ts";
import { iso } from "./views.ts";

/** What an env var's stored value is bound to (SecretBox associated data). */
export const envVarContext = (projectId: string, name: string) => `env:${projectId}:${name}`;

/** Per-project environment variables, encrypted at rest; the values are bound to their project and name. */
export function envVarsService(deps: {
  repos: Pick<Repositories, "projects" | "envVars">;
  box: SecretBox;
  bus: EventBus;
  clock: Clock;
}) {
  const { repos, box, bus, clock } = deps;
  const context = envVarContext;

  function decrypt(projectId: string, name: string, sealed: string): string {
    try {
      return box.open(sealed, context(projectId, name));
    } catch {
      throw new AppError(
        "internal_error",
        `The stored value of ${name} cannot be decrypted: the server's key file (SECRET_KEY_FILE, by default DATA_DIR/secret.key) does not hold the key it was written with`,
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
      await bus.publish("env.changed", { actorId: principal.user.id, projectId, name, change: "set" });
      return { name, value, updatedAt: iso(updatedAt) };
    },

    async unset(principal: Principal, projectId: string, name: string): Promise<void> {
      await visibleProject(principal, projectId);
      if (!(await repos.envVars.delete(viewerOf(principal), projectId, name))) {
        throw new AppError("not_found", `No environment variable named ${name}`);
      }
      await bus.publish("env.changed", { actorId: principal.user.id, projectId, name, change: "unset" });
    },
  };
}
export type EnvVarsService = ReturnType<typeof envVarsService>;
