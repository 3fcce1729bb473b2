import type { Board, ConnectionState, LogLevel, LogSource, Role } from "@sdk/protocol";
import type { Generated } from "kysely";
import type {
  AlertDeliveriesTable,
  AlertEpisodesTable,
  AlertRulesTable,
  AlertWebhooksTable,
} from "./schema-alerts.ts";

/** Times are milliseconds since the epoch, stored as 64-bit integers on both dialects. */
type Millis = number;

export interface UsersTable {
  id: string;
  email: string;
  passwordHash: string;
  role: Role;
  createdAt: Millis;
  updatedAt: Millis;
}

interface SessionsTable {
  /** SHA-256 of the cookie value; the cookie itself is never stored. */
  id: string;
  userId: string;
  createdAt: Millis;
  expiresAt: Millis;
}

export interface ApiTokensTable {
  id: string;
  userId: string;
  name: string;
  tokenHash: string;
  createdAt: Millis;
  lastUsedAt: Millis | null;
}

export interface ProjectsTable {
  id: string;
  ownerId: string;
  name: string;
  createdAt: Millis;
  updatedAt: Millis;
}

export interface DevicesTable {
  id: string;
  projectId: string;
  name: string;
  board: Board;
  secretHash: string;
  status: Generated<ConnectionState>;
  lastSeenAt: Millis | null;
  firmwareVersion: string | null;
  createdAt: Millis;
  updatedAt: Millis;
  /** The instance serving the device while it is online (0009); null when offline. */
  instanceId: Generated<string | null>;
  /** The generation of the device's newest authenticated connection in a cluster (0011). */
  claimSeq: Generated<number>;
}

interface EnvVarsTable {
  projectId: string;
  name: string;
  /** AES-256-GCM, see lib/secret-box.ts. */
  valueEncrypted: string;
  updatedAt: Millis;
}

export interface AuditLogTable {
  id: string;
  at: Millis;
  actorId: string | null;
  action: string;
  projectId: string | null;
  targetId: string | null;
  /** JSON object. */
  detail: string;
}

interface ReadinessTable {
  id: string;
  checkedAt: Millis;
}

export interface DeviceLogsTable {
  /** Sortable by time (see lib/ids.ts newSortableId). */
  id: string;
  deviceId: string;
  at: Millis;
  level: LogLevel;
  source: LogSource;
  message: string;
}

interface DeviceStateTable {
  deviceId: string;
  entityId: string;
  /** JSON. */
  value: string;
  updatedAt: Millis;
}

interface DeviceStateHistoryTable {
  id: string;
  deviceId: string;
  entityId: string;
  value: string;
  at: Millis;
}

export interface DeploymentsTable {
  /** Sortable by time. */
  id: string;
  projectId: string;
  version: number;
  status: "pending" | "active" | "inactive" | "failed" | "canary" | "rolled_back";
  sha256: string;
  /** JSON: board, entities, library version. */
  manifest: string;
  error: string | null;
  createdBy: string | null;
  createdAt: Millis;
  activatedAt: Millis | null;
  /** JSON: the rollout (a canary, or a plain deploy's first-minute watch); null before 0008. */
  rollout: Generated<string | null>;
}

export interface FirmwareReleasesTable {
  /** Semver; with the board, the key. The file is `<dataDir>/firmware/<version>/<board>.uf2`. */
  version: string;
  board: Board;
  bytes: number;
  sha256: string;
  /** `bundle`: imported from FIRMWARE_DIR at boot; `upload`: an admin's PUT. */
  source: "bundle" | "upload";
  createdAt: Millis;
}

interface ProjectRetentionTable {
  projectId: string;
  logMaxEntries: number;
  logMaxAgeDays: number;
  stateHistoryMaxEntries: number;
  stateHistoryMaxAgeDays: number;
  updatedAt: Millis;
}

/** A firmware release file in the database (0010), for the instances of a cluster. */
interface FirmwareImagesTable {
  version: string;
  board: Board;
  /** The UF2, base64. */
  uf2: string;
}

/** A running server instance and its lease (0009): past `leaseUntil` it is dead. */
interface InstancesTable {
  id: string;
  startedAt: Millis;
  leaseUntil: Millis;
}

/** A deployment's bundle and source map (0009), readable by every instance. */
interface DeploymentBundlesTable {
  deploymentId: string;
  bundle: string;
  sourceMap: string | null;
}

/** One sign-in attempt counted by the rate limiter (0009), shared by every instance. */
interface LoginAttemptsTable {
  key: string;
  at: Millis;
}

/** The secret key's check value (0012): an HMAC of a fixed label with the key, never the key. */
interface KeyCheckTable {
  name: string;
  value: string;
  createdAt: Millis;
}

interface DeviceTagsTable {
  deviceId: string;
  projectId: string;
  tag: string;
}

export interface DB {
  users: UsersTable;
  sessions: SessionsTable;
  apiTokens: ApiTokensTable;
  projects: ProjectsTable;
  devices: DevicesTable;
  envVars: EnvVarsTable;
  auditLog: AuditLogTable;
  readiness: ReadinessTable;
  deviceLogs: DeviceLogsTable;
  deviceState: DeviceStateTable;
  deviceStateHistory: DeviceStateHistoryTable;
  deployments: DeploymentsTable;
  firmwareReleases: FirmwareReleasesTable;
  firmwareImages: FirmwareImagesTable;
  projectRetention: ProjectRetentionTable;
  deviceTags: DeviceTagsTable;
  instances: InstancesTable;
  deploymentBundles: DeploymentBundlesTable;
  loginAttempts: LoginAttemptsTable;
  keyCheck: KeyCheckTable;
  alertRules: AlertRulesTable;
  alertWebhooks: AlertWebhooksTable;
  alertDeliveries: AlertDeliveriesTable;
  alertEpisodes: AlertEpisodesTable;
}
