import type { Kysely } from "kysely";
import type { Migration } from "kysely/migration";

/** Device tags: one row per device and tag; `projectId` lets a project's tag lists use one index. */
export const deviceTagsMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable("deviceTags")
      .addColumn("deviceId", "text", (c) => c.notNull().references("devices.id").onDelete("cascade"))
      .addColumn("projectId", "text", (c) => c.notNull().references("projects.id").onDelete("cascade"))
      .addColumn("tag", "text", (c) => c.notNull())
      .addPrimaryKeyConstraint("deviceTagsPk", ["deviceId", "tag"])
      .execute();
    await db.schema
      .createIndex("deviceTagsProjectTag")
      .on("deviceTags")
      .columns(["projectId", "tag"])
      .execute();
  },
};
