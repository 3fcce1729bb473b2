import { z } from "zod";
import { Board, ConnectionState, LogLevel, LogSource, Role } from "./fields.ts";
import { StoredDeploymentManifest } from "./manifest.ts";
import { Rollout } from "./rollouts.ts";
import { Timestamp } from "./schema-parts.ts";

// What the REST API returns: accounts, projects, devices and what belongs to them.

export const User = z.object({ id: z.string(), email: z.string(), role: Role, createdAt: Timestamp });
export type User = z.infer<typeof User>;

export const ApiToken = z.object({
  id: z.string(),
  name: z.string(),
  createdAt: Timestamp,
  lastUsedAt: Timestamp.nullable(),
});
export type ApiToken = z.infer<typeof ApiToken>;

export const CreatedApiToken = ApiToken.extend({
  token: z.string().describe("The secret token. It is shown only once."),
});
export type CreatedApiToken = z.infer<typeof CreatedApiToken>;

export const Project = z.object({
  id: z.string(),
  name: z.string(),
  ownerId: z.string(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type Project = z.infer<typeof Project>;

export const Device = z.object({
  id: z.string(),
  projectId: z.string(),
  name: z.string(),
  board: Board,
  status: ConnectionState,
  lastSeenAt: Timestamp.nullable(),
  firmwareVersion: z.string().nullable(),
  firmwareUpdate: z
    .string()
    .nullable()
    .describe(
      "The newest firmware release's version when it is newer than `firmwareVersion`; null when up to date or unknown.",
    ),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  tags: z.array(z.string()).describe("The device's tags, sorted (see docs/api.md, Device tags)."),
});
export type Device = z.infer<typeof Device>;

export const DeviceCredentials = z.object({
  deviceId: z.string(),
  secret: z
    .string()
    .describe("The device secret. It is shown only once; issuing new credentials revokes it."),
});
export type DeviceCredentials = z.infer<typeof DeviceCredentials>;

export const EnvVar = z.object({ name: z.string(), value: z.string(), updatedAt: Timestamp });
export type EnvVar = z.infer<typeof EnvVar>;

export const AuditEntry = z.object({
  id: z.string(),
  at: Timestamp,
  actorId: z.string().nullable(),
  action: z.string(),
  projectId: z.string().nullable(),
  targetId: z.string().nullable(),
  detail: z.record(z.string(), z.unknown()),
});
export type AuditEntry = z.infer<typeof AuditEntry>;

export const ServerInfo = z.object({
  version: z.string(),
  setupRequired: z.boolean().describe("True until the first (admin) account is registered."),
  registrationOpen: z.boolean(),
  deploymentsKept: z
    .number()
    .int()
    .describe("How many deployments each project keeps (`DEPLOYMENTS_KEPT`); the live one is never removed."),
});
export type ServerInfo = z.infer<typeof ServerInfo>;

/** One line of a device's log. */
export const LogEntry = z.object({
  id: z.string(),
  at: Timestamp,
  level: LogLevel,
  source: LogSource,
  message: z.string(),
});
export type LogEntry = z.infer<typeof LogEntry>;

/** The latest value of one state entity. */
export const StateValue = z.object({ entityId: z.string(), value: z.unknown(), updatedAt: Timestamp });
export type StateValue = z.infer<typeof StateValue>;
export const StateHistoryEntry = z.object({ id: z.string(), value: z.unknown(), at: Timestamp });

/**
 * `canary`: running on its canary devices while the stable version runs on the others;
 * `rolled_back`: its rollout was rolled back (by itself or by a user), with the reason in `error`.
 */
export const DeploymentStatus = z.enum(["pending", "active", "inactive", "failed", "canary", "rolled_back"]);
export type DeploymentStatus = z.infer<typeof DeploymentStatus>;

export const Deployment = z.object({
  id: z.string(),
  projectId: z.string(),
  version: z.number().int(),
  status: DeploymentStatus,
  sha256: z.string(),
  manifest: StoredDeploymentManifest,
  error: z.string().nullable(),
  createdBy: z.string().nullable(),
  createdAt: Timestamp,
  activatedAt: Timestamp.nullable(),
  /** Its staged rollout (canary) or first-minute watch, when it had one. */
  rollout: Rollout.nullable(),
});
export type Deployment = z.infer<typeof Deployment>;

/** A deployment's sources, as its source map carries them (`sourcesContent`). */
export const DeploymentSource = z.object({
  files: z.array(
    z.object({
      path: z.string().describe("As the build saw it, relative to the project: `src/index.ts`."),
      text: z.string(),
    }),
  ),
});
export type DeploymentSource = z.infer<typeof DeploymentSource>;

export const DeploymentBundle = z
  .custom<Uint8Array>((value) => value instanceof Uint8Array, "must be raw bytes")
  .describe("The bundle (`script.js`) as deployed");

/** Firmware images: a UF2 file of at most 4 MiB (the Pico 2 W's whole flash). */
export const firmwareLimits = { uf2MaxBytes: 4 * 1024 * 1024 } as const;

export const FirmwareRelease = z.object({
  version: z.string().describe("Semantic version of the release (`1.2.3`)."),
  newest: z.boolean().describe("True on the newest release (semver order), which devices are compared with."),
  boards: z.array(
    z.object({
      board: Board,
      bytes: z.number().int().describe("Size of the UF2 file."),
      sha256: z.string().describe("SHA-256 of the UF2 file, hex."),
    }),
  ),
});
export type FirmwareRelease = z.infer<typeof FirmwareRelease>;

/** A UF2 file, as raw bytes (`application/octet-stream`) rather than JSON. */
export const FirmwareImage = z
  .custom<Uint8Array>((value) => value instanceof Uint8Array, "must be raw bytes")
  .describe("The UF2 file (application/octet-stream)");

/** The Home Assistant bridge (MQTT discovery) as one project sees it. */
export const HomeAssistantStatus = z.object({
  enabled: z.boolean().describe("False when the server has no MQTT_URL: nothing is published."),
  connected: z.boolean().describe("The bridge is connected to the MQTT broker right now."),
  broker: z.string().nullable().describe("The broker's `host:port` (never its credentials)."),
  mode: z
    .enum(["device", "component"])
    .nullable()
    .describe("HA_DISCOVERY: one config per device, or per entity."),
  discoveryPrefix: z.string().nullable(),
  baseTopic: z.string().nullable(),
  devices: z
    .array(
      z.object({
        deviceId: z.string(),
        name: z.string(),
        online: z.boolean(),
        published: z.boolean().describe("The broker holds this device's current discovery config."),
        deletedInHomeAssistant: z
          .boolean()
          .describe("Removed in Home Assistant's UI: published again by the next deploy only."),
        entities: z.array(
          z.object({
            id: z.string(),
            kind: z.enum(["sensor", "binary_sensor", "switch", "light"]),
            name: z.string(),
            uniqueId: z.string(),
            defaultEntityId: z.string().describe("The entity id Home Assistant gives it when created."),
          }),
        ),
      }),
    )
    .describe("Devices of the project's live deployment and the entities published for each."),
});
export type HomeAssistantStatus = z.infer<typeof HomeAssistantStatus>;

/**
 * A backup archive (gzip-compressed tar, `application/octet-stream`): bytes to a client, a stream
 * as the server sends it.
 */
export const BackupArchive = z
  .custom<Uint8Array | AsyncIterable<Uint8Array>>(
    (value) =>
      value instanceof Uint8Array ||
      (typeof value === "object" && value !== null && Symbol.asyncIterator in value),
    "must be raw bytes",
  )
  .describe("The archive (application/octet-stream, gzip-compressed tar)");
