import type { Kysely } from "kysely";
import type { Migration } from "kysely/migration";

/**
 * Staged deploys: a deployment's rollout (a canary, or a plain deploy's first-minute watch) as JSON
 * text, null for deployments made before. Its statuses gain `canary` and `rolled_back` (the column
 * is plain text: nothing to change).
 */
export const rolloutsMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable("deployments").addColumn("rollout", "text").execute();
  },
};
