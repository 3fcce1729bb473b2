import type { Kysely } from "kysely";
import type { DB } from "../db/schema.ts";

/** Who is asking. Every query for project data is filtered by what this viewer may see. */
export interface Viewer {
  userId: string;
  isAdmin: boolean;
}

/** The ids of the projects a viewer may see: their own, or all for an admin. */
export function visibleProjectIds(db: Kysely<DB>, viewer: Viewer) {
  const query = db.selectFrom("projects").select("projects.id");
  return viewer.isAdmin ? query : query.where("projects.ownerId", "=", viewer.userId);
}
