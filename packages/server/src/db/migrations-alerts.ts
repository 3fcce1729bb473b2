import type { Kysely } from "kysely";
import type { Migration } from "kysely/migration";

/** Alert rules, webhooks, the delivery queue and log, and the open alert episodes. */
export const alertsMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable("alertRules")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("projectId", "text", (c) => c.notNull().references("projects.id").onDelete("cascade"))
      .addColumn("kind", "text", (c) => c.notNull())
      .addColumn("minutes", "integer")
      .addColumn("count", "integer")
      .addColumn("windowMinutes", "integer")
      .addColumn("createdAt", "bigint", (c) => c.notNull())
      .execute();
    await db.schema.createIndex("alertRulesProjectId").on("alertRules").column("projectId").execute();
    await db.schema
      .createTable("alertWebhooks")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("projectId", "text", (c) => c.notNull().references("projects.id").onDelete("cascade"))
      .addColumn("name", "text", (c) => c.notNull())
      .addColumn("url", "text", (c) => c.notNull())
      .addColumn("secretEncrypted", "text", (c) => c.notNull())
      .addColumn("createdAt", "bigint", (c) => c.notNull())
      .execute();
    await db.schema.createIndex("alertWebhooksProjectId").on("alertWebhooks").column("projectId").execute();
    await db.schema
      .createTable("alertDeliveries")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("projectId", "text", (c) => c.notNull().references("projects.id").onDelete("cascade"))
      .addColumn("webhookId", "text", (c) => c.notNull().references("alertWebhooks.id").onDelete("cascade"))
      .addColumn("type", "text", (c) => c.notNull())
      .addColumn("body", "text", (c) => c.notNull())
      .addColumn("status", "text", (c) => c.notNull())
      .addColumn("attempts", "text", (c) => c.notNull())
      .addColumn("nextAttemptAt", "bigint")
      .addColumn("createdAt", "bigint", (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex("alertDeliveriesProject")
      .on("alertDeliveries")
      .columns(["projectId", "id"])
      .execute();
    await db.schema
      .createIndex("alertDeliveriesDue")
      .on("alertDeliveries")
      .columns(["status", "nextAttemptAt"])
      .execute();
    await db.schema
      .createTable("alertEpisodes")
      .addColumn("ruleId", "text", (c) => c.notNull().references("alertRules.id").onDelete("cascade"))
      .addColumn("subject", "text", (c) => c.notNull())
      .addColumn("openedAt", "bigint", (c) => c.notNull())
      .addPrimaryKeyConstraint("alertEpisodesPk", ["ruleId", "subject"])
      .execute();
  },
};
