import type { Board } from "@sdk/protocol";
import type { Kysely, Selectable } from "kysely";
import type { DB, FirmwareReleasesTable } from "../db/schema.ts";

export type FirmwareRow = Selectable<FirmwareReleasesTable>;

/** Firmware releases: one row per version and board (not project data: every user may read them). */
export function firmwareRepository(db: Kysely<DB>) {
  /** Stores the UF2 (base64) of a release file; one already there is left alone. */
  const putImage = async (into: Kysely<DB>, version: string, board: Board, uf2: string) => {
    await into
      .insertInto("firmwareImages")
      .values({ version, board, uf2 })
      .onConflict((oc) => oc.columns(["version", "board"]).doNothing())
      .execute();
  };
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
    /** The UF2 of a release file stored in the database (a cluster's instances), base64. */
    image: async (version: string, board: Board) =>
      (
        await db
          .selectFrom("firmwareImages")
          .select("uf2")
          .where("version", "=", version)
          .where("board", "=", board)
          .executeTakeFirst()
      )?.uf2,
    /** Release files whose UF2 is not in the database. */
    withoutImage: () =>
      db
        .selectFrom("firmwareReleases")
        .select(["firmwareReleases.version", "firmwareReleases.board"])
        .where(({ not, exists, selectFrom }) =>
          not(
            exists(
              selectFrom("firmwareImages")
                .select("firmwareImages.version")
                .whereRef("firmwareImages.version", "=", "firmwareReleases.version")
                .whereRef("firmwareImages.board", "=", "firmwareReleases.board"),
            ),
          ),
        )
        .execute(),
    /** Stores the UF2 (base64) of a release file; one already there is left alone. */
    putImage: (version: string, board: Board, uf2: string) => putImage(db, version, board, uf2),
    /**
     * A release file's row and, with `uf2` (base64, a cluster's instances), its image, in one
     * transaction: no instance ever finds the row without the image. A row that is already there
     * is left alone (two imports racing store the same file), and so is its image.
     */
    insert: (row: FirmwareRow, uf2?: string) =>
      db.transaction().execute(async (tx) => {
        await tx
          .insertInto("firmwareReleases")
          .values(row)
          .onConflict((oc) => oc.columns(["version", "board"]).doNothing())
          .execute();
        if (uf2 !== undefined) await putImage(tx, row.version, row.board, uf2);
      }),
    /** Removes a release file's image from the database if it is still `uf2` (a damaged copy). */
    dropImage: async (version: string, board: Board, uf2: string) => {
      await db
        .deleteFrom("firmwareImages")
        .where("version", "=", version)
        .where("board", "=", board)
        .where("uf2", "=", uf2)
        .execute();
    },
  };
}
