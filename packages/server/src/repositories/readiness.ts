import type { Kysely } from "kysely";
import type { DB } from "../db/schema.ts";

export function readinessRepository(db: Kysely<DB>) {
  return {
    /** A real write: proves the database accepts writes right now. */
    write: async (id: string, now: number) => {
      await db
        .insertInto("readiness")
        .values({ id, checkedAt: now })
        .onConflict((oc) => oc.column("id").doUpdateSet({ checkedAt: now }))
        .execute();
    },
  };
}
