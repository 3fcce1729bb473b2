import type { Kysely } from "kysely";
import type { DB } from "../db/schema.ts";
import { type Viewer, visibleProjectIds } from "./viewer.ts";

export function envVarsRepository(db: Kysely<DB>) {
  return {
    /** Ordered by name byte-wise on both dialects (a PostgreSQL collation may order "_" differently). */
    list: async (viewer: Viewer, projectId: string) =>
      (
        await db
          .selectFrom("envVars")
          .select(["name", "valueEncrypted", "updatedAt"])
          .where("projectId", "=", projectId)
          .where("projectId", "in", visibleProjectIds(db, viewer))
          .execute()
      ).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)),
    /** For the script host: every env var of a project, to hand to its running scripts. */
    listForScripts: (projectId: string) =>
      db
        .selectFrom("envVars")
        .select(["name", "valueEncrypted"])
        .where("projectId", "=", projectId)
        .execute(),
    count: async (projectId: string) =>
      Number(
        (
          await db
            .selectFrom("envVars")
            .where("projectId", "=", projectId)
            .select((eb) => eb.fn.countAll().as("n"))
            .executeTakeFirstOrThrow()
        ).n,
      ),
    exists: async (projectId: string, name: string) =>
      (await db
        .selectFrom("envVars")
        .select("name")
        .where("projectId", "=", projectId)
        .where("name", "=", name)
        .executeTakeFirst()) !== undefined,
    /** The caller has already checked that the project is visible. */
    upsert: async (row: { projectId: string; name: string; valueEncrypted: string; updatedAt: number }) => {
      await db
        .insertInto("envVars")
        .values(row)
        .onConflict((oc) =>
          oc
            .columns(["projectId", "name"])
            .doUpdateSet({ valueEncrypted: row.valueEncrypted, updatedAt: row.updatedAt }),
        )
        .execute();
    },
    delete: async (viewer: Viewer, projectId: string, name: string) => {
      const result = await db
        .deleteFrom("envVars")
        .where("projectId", "=", projectId)
        .where("name", "=", name)
        .where("projectId", "in", visibleProjectIds(db, viewer))
        .executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },
  };
}
