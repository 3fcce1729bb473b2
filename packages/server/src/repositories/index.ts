import type { Kysely } from "kysely";
import type { DB } from "../db/schema.ts";
import { apiTokensRepository } from "./api-tokens.ts";
import { auditLogRepository } from "./audit-log.ts";
import { deploymentsRepository } from "./deployments.ts";
import { deviceLogsRepository } from "./device-logs.ts";
import { deviceStateRepository } from "./device-state.ts";
import { devicesRepository } from "./devices.ts";
import { envVarsRepository } from "./env-vars.ts";
import { projectsRepository } from "./projects.ts";
import { readinessRepository } from "./readiness.ts";
import { sessionsRepository } from "./sessions.ts";
import { usersRepository } from "./users.ts";

export type { Viewer } from "./viewer.ts";

export function createRepositories(db: Kysely<DB>) {
  return {
    users: usersRepository(db),
    sessions: sessionsRepository(db),
    apiTokens: apiTokensRepository(db),
    projects: projectsRepository(db),
    devices: devicesRepository(db),
    envVars: envVarsRepository(db),
    auditLog: auditLogRepository(db),
    readiness: readinessRepository(db),
    deviceLogs: deviceLogsRepository(db),
    deviceState: deviceStateRepository(db),
    deployments: deploymentsRepository(db),
  };
}
export type Repositories = ReturnType<typeof createRepositories>;
