import type { Board } from "@sdk/protocol";
import type { Kysely, Selectable } from "kysely";
import type { DB, FirmwareReleasesTable } from "../db/schema.ts";

export type FirmwareRow = Selectable<FirmwareReleasesTable>;

/** Firmware releases: one row per version and board (not project data: every user may read them). */
export function firmwareRepository(db: Kysely<DB>) {
  return {
    list: () => db.selectFrom("firmwareReleases").selectAll().execute(),
    versions: async () =>
      (await db.selectFrom("firmwareReleases").select("version").distinct().execute()).map((r) => r.version),
    find: (version: string, board: Board) =>
      db
        .selectFrom("firmwareReleases")
        .selectAll()
        .where("version", "=", version)
        .where("board", "=", board)
        .executeTakeFirst(),
    /** A row that is already there is left alone (two imports racing store the same file). */
    insert: async (row: FirmwareRow) => {
      await db
        .insertInto("firmwareReleases")
        .values(row)
        .onConflict((oc) => oc.columns(["version", "board"]).doNothing())
        .execute();
    },
  };
}
