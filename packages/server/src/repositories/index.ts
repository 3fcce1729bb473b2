import type { Kysely } from "kysely";
import type { DB } from "../db/schema.ts";
import type { WriteBatcher } from "../db/write-batcher.ts";
import { alertsRepository } from "./alerts.ts";
import { apiTokensRepository } from "./api-tokens.ts";
import { auditLogRepository } from "./audit-log.ts";
import { deploymentsRepository } from "./deployments.ts";
import { deviceLogsRepository } from "./device-logs.ts";
import { deviceStateRepository } from "./device-state.ts";
import { deviceTagsRepository } from "./device-tags.ts";
import { devicesRepository } from "./devices.ts";
import { envVarsRepository } from "./env-vars.ts";
import { firmwareRepository } from "./firmware.ts";
import { projectsRepository } from "./projects.ts";
import { readinessRepository } from "./readiness.ts";
import { sessionsRepository } from "./sessions.ts";
import { usersRepository } from "./users.ts";

export type { Viewer } from "./viewer.ts";

/** `batcher` groups the frequent device writes (presence, logs, state) into shared commits. */
export function createRepositories(db: Kysely<DB>, batcher: WriteBatcher) {
  return {
    users: usersRepository(db),
    sessions: sessionsRepository(db),
    apiTokens: apiTokensRepository(db),
    projects: projectsRepository(db),
    devices: devicesRepository(db, batcher),
    envVars: envVarsRepository(db),
    auditLog: auditLogRepository(db),
    readiness: readinessRepository(db),
    deviceLogs: deviceLogsRepository(db, batcher),
    deviceState: deviceStateRepository(db, batcher),
    deployments: deploymentsRepository(db),
    firmware: firmwareRepository(db),
    deviceTags: deviceTagsRepository(db),
    alerts: alertsRepository(db),
  };
}
export type Repositories = ReturnType<typeof createRepositories>;
