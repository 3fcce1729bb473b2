import type { Config } from "../config.ts";
import type { Database } from "../db/database.ts";
import type { Clock } from "../lib/clock.ts";
import type { SecretBox } from "../lib/secret-box.ts";
import { createRepositories } from "../repositories/index.ts";
import { ProjectFiles } from "../storage/project-files.ts";
import { auditService } from "./audit.ts";
import { authService } from "./auth.ts";
import { devicesService } from "./devices.ts";
import { envVarsService } from "./env-vars.ts";
import { projectsService } from "./projects.ts";
import { AttemptLimiter } from "./rate-limiter.ts";
import { readinessService } from "./readiness.ts";
import { usersService } from "./users.ts";

export interface ServiceDeps {
  config: Config;
  database: Database;
  box: SecretBox;
  clock: Clock;
  version: string;
}

/** Wires repositories into services. Routes and sockets only ever see what this returns. */
export function createServices({ config, database, box, clock, version }: ServiceDeps) {
  const repos = createRepositories(database.db);
  const files = new ProjectFiles(config.dataDir);
  const audit = auditService(repos.auditLog, clock);
  const limiter = new AttemptLimiter(config.rateLimit, clock);
  return {
    audit,
    auth: authService({
      repos,
      audit,
      limiter,
      clock,
      allowRegistration: config.allowRegistration,
      sessionMaxAgeDays: config.sessionMaxAgeDays,
      version,
    }),
    users: usersService({ repos, audit, files, clock }),
    projects: projectsService({ repos, audit, files, clock }),
    devices: devicesService({ repos, audit, clock }),
    envVars: envVarsService({ repos, box, audit, clock }),
    readiness: readinessService({ repos, clock, dialect: database.dialect }),
  };
}
export type Services = ReturnType<typeof createServices>;
