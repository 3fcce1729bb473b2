import type { Kysely } from "kysely";
import type { Migration } from "kysely/migration";

/**
 * A check value of the secret key (an HMAC of a fixed label with it, never the key): a server or
 * cluster instance started with another key file than the one this database's env vars and
 * webhook secrets were written with refuses to start, instead of writing values the others
 * cannot read. One row, written the first time a key is used.
 */
export const keyCheckMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable("keyCheck")
      .addColumn("name", "text", (c) => c.primaryKey())
      .addColumn("value", "text", (c) => c.notNull())
      .addColumn("createdAt", "bigint", (c) => c.notNull())
      .execute();
  },
};
