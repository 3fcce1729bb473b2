import type { Kysely } from "kysely";
import { type Migration, type MigrationProvider, Migrator } from "kysely/migration";
import { claimSeqMigration } from "./migration-claim-seq.ts";
import { clusterMigration } from "./migration-cluster.ts";
import { deviceTagsMigration } from "./migration-device-tags.ts";
import { firmwareImagesMigration } from "./migration-firmware-images.ts";
import { keyCheckMigration } from "./migration-key-check.ts";
import { rolloutsMigration } from "./migration-rollouts.ts";
import { alertsMigration } from "./migrations-alerts.ts";

// One list of migrations for both dialects: only column types both understand (text, bigint).
// Names are camelCase here; the CamelCasePlugin turns them into snake_case columns.
const migrations: Record<string, Migration> = {
  "0001_core": {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable("users")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("email", "text", (c) => c.notNull().unique())
        .addColumn("passwordHash", "text", (c) => c.notNull())
        .addColumn("role", "text", (c) => c.notNull())
        .addColumn("createdAt", "bigint", (c) => c.notNull())
        .addColumn("updatedAt", "bigint", (c) => c.notNull())
        .execute();
      await db.schema
        .createTable("sessions")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("userId", "text", (c) => c.notNull().references("users.id").onDelete("cascade"))
        .addColumn("createdAt", "bigint", (c) => c.notNull())
        .addColumn("expiresAt", "bigint", (c) => c.notNull())
        .execute();
      await db.schema.createIndex("sessionsUserId").on("sessions").column("userId").execute();
      await db.schema
        .createTable("apiTokens")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("userId", "text", (c) => c.notNull().references("users.id").onDelete("cascade"))
        .addColumn("name", "text", (c) => c.notNull())
        .addColumn("tokenHash", "text", (c) => c.notNull().unique())
        .addColumn("createdAt", "bigint", (c) => c.notNull())
        .addColumn("lastUsedAt", "bigint")
        .execute();
      await db.schema.createIndex("apiTokensUserId").on("apiTokens").column("userId").execute();
      await db.schema
        .createTable("projects")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("ownerId", "text", (c) => c.notNull().references("users.id").onDelete("cascade"))
        .addColumn("name", "text", (c) => c.notNull())
        .addColumn("createdAt", "bigint", (c) => c.notNull())
        .addColumn("updatedAt", "bigint", (c) => c.notNull())
        .execute();
      await db.schema.createIndex("projectsOwnerId").on("projects").column("ownerId").execute();
      await db.schema
        .createTable("devices")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("projectId", "text", (c) => c.notNull().references("projects.id").onDelete("cascade"))
        .addColumn("name", "text", (c) => c.notNull())
        .addColumn("board", "text", (c) => c.notNull())
        .addColumn("secretHash", "text", (c) => c.notNull())
        .addColumn("status", "text", (c) => c.notNull().defaultTo("offline"))
        .addColumn("lastSeenAt", "bigint")
        .addColumn("firmwareVersion", "text")
        .addColumn("createdAt", "bigint", (c) => c.notNull())
        .addColumn("updatedAt", "bigint", (c) => c.notNull())
        .execute();
      await db.schema.createIndex("devicesProjectId").on("devices").column("projectId").execute();
      await db.schema
        .createTable("envVars")
        .addColumn("projectId", "text", (c) => c.notNull().references("projects.id").onDelete("cascade"))
        .addColumn("name", "text", (c) => c.notNull())
        .addColumn("valueEncrypted", "text", (c) => c.notNull())
        .addColumn("updatedAt", "bigint", (c) => c.notNull())
        .addPrimaryKeyConstraint("envVarsPk", ["projectId", "name"])
        .execute();
      await db.schema
        .createTable("auditLog")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("at", "bigint", (c) => c.notNull())
        .addColumn("actorId", "text")
        .addColumn("action", "text", (c) => c.notNull())
        .addColumn("projectId", "text")
        .addColumn("targetId", "text")
        .addColumn("detail", "text", (c) => c.notNull())
        .execute();
      await db.schema.createIndex("auditLogAt").on("auditLog").columns(["at", "id"]).execute();
      await db.schema
        .createTable("readiness")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("checkedAt", "bigint", (c) => c.notNull())
        .execute();
    },
  },
  "0002_device_link": {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable("deviceLogs")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("deviceId", "text", (c) => c.notNull().references("devices.id").onDelete("cascade"))
        .addColumn("at", "bigint", (c) => c.notNull())
        .addColumn("level", "text", (c) => c.notNull())
        .addColumn("source", "text", (c) => c.notNull())
        .addColumn("message", "text", (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex("deviceLogsDeviceId")
        .on("deviceLogs")
        .columns(["deviceId", "id"])
        .execute();
      await db.schema.createIndex("deviceLogsAt").on("deviceLogs").column("at").execute();
      await db.schema
        .createTable("deviceState")
        .addColumn("deviceId", "text", (c) => c.notNull().references("devices.id").onDelete("cascade"))
        .addColumn("entityId", "text", (c) => c.notNull())
        .addColumn("value", "text", (c) => c.notNull())
        .addColumn("updatedAt", "bigint", (c) => c.notNull())
        .addPrimaryKeyConstraint("deviceStatePk", ["deviceId", "entityId"])
        .execute();
      await db.schema
        .createTable("deviceStateHistory")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("deviceId", "text", (c) => c.notNull().references("devices.id").onDelete("cascade"))
        .addColumn("entityId", "text", (c) => c.notNull())
        .addColumn("value", "text", (c) => c.notNull())
        .addColumn("at", "bigint", (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex("deviceStateHistoryEntity")
        .on("deviceStateHistory")
        .columns(["deviceId", "entityId", "id"])
        .execute();
    },
  },
  "0003_deployments": {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable("deployments")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("projectId", "text", (c) => c.notNull().references("projects.id").onDelete("cascade"))
        .addColumn("version", "integer", (c) => c.notNull())
        .addColumn("status", "text", (c) => c.notNull())
        .addColumn("sha256", "text", (c) => c.notNull())
        .addColumn("manifest", "text", (c) => c.notNull())
        .addColumn("error", "text")
        .addColumn("createdBy", "text")
        .addColumn("createdAt", "bigint", (c) => c.notNull())
        .addColumn("activatedAt", "bigint")
        .addUniqueConstraint("deploymentsProjectVersion", ["projectId", "version"])
        .execute();
    },
  },
  "0004_firmware": {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable("firmwareReleases")
        .addColumn("version", "text", (c) => c.notNull())
        .addColumn("board", "text", (c) => c.notNull())
        .addColumn("bytes", "bigint", (c) => c.notNull())
        .addColumn("sha256", "text", (c) => c.notNull())
        .addColumn("source", "text", (c) => c.notNull())
        .addColumn("createdAt", "bigint", (c) => c.notNull())
        .addPrimaryKeyConstraint("firmwareReleasesPk", ["version", "board"])
        .execute();
    },
  },
  "0005_alerts": alertsMigration,
  "0006_retention": {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable("projectRetention")
        .addColumn("projectId", "text", (c) => c.primaryKey().references("projects.id").onDelete("cascade"))
        .addColumn("logMaxEntries", "integer", (c) => c.notNull())
        .addColumn("logMaxAgeDays", "integer", (c) => c.notNull())
        .addColumn("stateHistoryMaxEntries", "integer", (c) => c.notNull())
        .addColumn("stateHistoryMaxAgeDays", "integer", (c) => c.notNull())
        .addColumn("updatedAt", "bigint", (c) => c.notNull())
        .execute();
      // The sweeper removes history by age, and the oldest first when the database is over its cap.
      await db.schema.createIndex("deviceStateHistoryAt").on("deviceStateHistory").column("at").execute();
    },
  },
  "0007_device_tags": deviceTagsMigration,
  "0008_rollouts": rolloutsMigration,
  "0009_cluster": clusterMigration,
  "0010_firmware_images": firmwareImagesMigration,
  "0011_claim_seq": claimSeqMigration,
  "0012_key_check": keyCheckMigration,
};

const provider: MigrationProvider = { getMigrations: async () => migrations };

/** Migrations that rewrite or index a table that grows (state history), so may take a while. */
const slowOnBigDatabases: Record<string, string> = {
  "0006_retention": "indexing state history by time",
};

/** What the pending migrations will do that may take long on a big database, if anything. */
export async function slowPendingMigrations(db: Kysely<unknown>, schema?: string): Promise<string[]> {
  const migrator = new Migrator({ db, provider, ...(schema ? { migrationTableSchema: schema } : {}) });
  return (await migrator.getMigrations())
    .filter((m) => m.executedAt === undefined && slowOnBigDatabases[m.name] !== undefined)
    .map((m) => slowOnBigDatabases[m.name]!);
}

/**
 * `schema`: on PostgreSQL, the connection's current schema. Without it Kysely looks for its
 * bookkeeping tables in every schema and skips creating them when another schema has them.
 */
export async function migrateToLatest(db: Kysely<unknown>, schema?: string): Promise<string[]> {
  const migrator = new Migrator({ db, provider, ...(schema ? { migrationTableSchema: schema } : {}) });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === "Success").map((r) => r.migrationName);
}
