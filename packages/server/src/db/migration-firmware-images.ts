import type { Kysely } from "kysely";
import type { Migration } from "kysely/migration";

/**
 * Firmware images in the database (docs/scaling.md), so that a release uploaded through one
 * instance of a cluster is downloadable through every instance: the UF2 as base64 text (a type
 * both dialects understand), one row per release file. One process keeps its files under
 * DATA_DIR/firmware only and leaves this table empty.
 */
export const firmwareImagesMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable("firmwareImages")
      .addColumn("version", "text", (c) => c.notNull())
      .addColumn("board", "text", (c) => c.notNull())
      .addColumn("uf2", "text", (c) => c.notNull())
      .addPrimaryKeyConstraint("firmwareImagesPk", ["version", "board"])
      .addForeignKeyConstraint("firmwareImagesRelease", ["version", "board"], "firmwareReleases", [
        "version",
        "board",
      ])
      .execute();
  },
};
