import type { Kysely } from "kysely";
import type { Migration } from "kysely/migration";

/**
 * `devices.claimSeq` (docs/scaling.md): the order of a device's connections across the instances
 * of a cluster. Each authenticated connection takes the next number; the online write of its hello
 * applies only while no newer connection has taken one, and a claim releases only connections older
 * than its own. One process never writes it.
 */
export const claimSeqMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .alterTable("devices")
      .addColumn("claimSeq", "bigint", (c) => c.notNull().defaultTo(0))
      .execute();
  },
};
