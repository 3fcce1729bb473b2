import type { Kysely } from "kysely";
import type { Migration } from "kysely/migration";

/**
 * Scale-out (docs/scaling.md): several instances on one PostgreSQL. The same tables exist on SQLite,
 * where the one process is the only instance.
 * - `instances`: each running instance and its lease; one whose lease has expired is dead.
 * - `devices.instanceId`: the instance serving an online device (null when offline).
 * - `deploymentBundles`: a deployment's bundle and source map, where every instance can read them
 *   (before, files under DATA_DIR/projects; copied in at boot by the deployments service).
 * - `loginAttempts`: the sign-in rate limiter's attempts, one limit across instances.
 */
export const clusterMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable("instances")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("startedAt", "bigint", (c) => c.notNull())
      .addColumn("leaseUntil", "bigint", (c) => c.notNull())
      .execute();
    await db.schema.alterTable("devices").addColumn("instanceId", "text").execute();
    await db.schema.createIndex("devicesInstanceId").on("devices").column("instanceId").execute();
    await db.schema
      .createTable("deploymentBundles")
      .addColumn("deploymentId", "text", (c) =>
        c.primaryKey().references("deployments.id").onDelete("cascade"),
      )
      .addColumn("bundle", "text", (c) => c.notNull())
      .addColumn("sourceMap", "text")
      .execute();
    await db.schema
      .createTable("loginAttempts")
      .addColumn("key", "text", (c) => c.notNull())
      .addColumn("at", "bigint", (c) => c.notNull())
      .execute();
    await db.schema.createIndex("loginAttemptsKeyAt").on("loginAttempts").columns(["key", "at"]).execute();
  },
};
