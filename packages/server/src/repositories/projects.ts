import type { Kysely, Selectable } from "kysely";
import type { DB, ProjectsTable } from "../db/schema.ts";
import { type Viewer, visibleProjectIds } from "./viewer.ts";

export type ProjectRow = Selectable<ProjectsTable>;

export function projectsRepository(db: Kysely<DB>) {
  return {
    listVisible: (viewer: Viewer) =>
      db
        .selectFrom("projects")
        .selectAll()
        .where("id", "in", visibleProjectIds(db, viewer))
        .orderBy("createdAt")
        .orderBy("id")
        .execute(),
    findVisible: (viewer: Viewer, id: string) =>
      db
        .selectFrom("projects")
        .selectAll()
        .where("id", "=", id)
        .where("id", "in", visibleProjectIds(db, viewer))
        .executeTakeFirst(),
    /** Project ids owned by a user (to clean up their files when the user is deleted). */
    idsOwnedBy: async (userId: string) =>
      (await db.selectFrom("projects").select("id").where("ownerId", "=", userId).execute()).map((r) => r.id),
    insert: async (row: ProjectRow) => {
      await db.insertInto("projects").values(row).execute();
    },
    rename: (viewer: Viewer, id: string, name: string, now: number) =>
      db
        .updateTable("projects")
        .set({ name, updatedAt: now })
        .where("id", "=", id)
        .where("id", "in", visibleProjectIds(db, viewer))
        .returningAll()
        .executeTakeFirst(),
    delete: async (viewer: Viewer, id: string) => {
      const result = await db
        .deleteFrom("projects")
        .where("id", "=", id)
        .where("id", "in", visibleProjectIds(db, viewer))
        .executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },
  };
}
