import type { Kysely, Transaction } from "kysely";
import type { DB } from "../db/schema.ts";
import { type Viewer, visibleProjectIds } from "./viewer.ts";

/** Device tags. Every read and write checks that the viewer may see the device's project. */
export function deviceTagsRepository(db: Kysely<DB>) {
  const visibleDevice = (viewer: Viewer, projectId: string, deviceId: string) =>
    db
      .selectFrom("devices")
      .select("id")
      .where("id", "=", deviceId)
      .where("projectId", "=", projectId)
      .where("projectId", "in", visibleProjectIds(db, viewer));

  const tagsOf = async (tx: Kysely<DB> | Transaction<DB>, deviceId: string) =>
    (
      await tx
        .selectFrom("deviceTags")
        .select("tag")
        .where("deviceId", "=", deviceId)
        .orderBy("tag")
        .execute()
    ).map((r) => r.tag);

  /**
   * Changes a device's tags in one transaction: `change` gets the tags it has and returns the ones
   * it should have (null: the result would break a rule; nothing is written). Undefined when the
   * device is not visible.
   */
  const update = (
    viewer: Viewer,
    projectId: string,
    deviceId: string,
    change: (current: string[]) => string[] | null,
    now: number,
  ) =>
    db.transaction().execute(async (tx) => {
      const device = await tx
        .selectFrom("devices")
        .select("id")
        .where("id", "=", deviceId)
        .where("projectId", "=", projectId)
        .where("projectId", "in", visibleProjectIds(tx, viewer))
        .executeTakeFirst();
      if (!device) return undefined;
      const before = await tagsOf(tx, deviceId);
      const after = change(before);
      if (after === null) return { before, after: null };
      const removed = before.filter((t) => !after.includes(t));
      const added = after.filter((t) => !before.includes(t));
      if (removed.length > 0)
        await tx
          .deleteFrom("deviceTags")
          .where("deviceId", "=", deviceId)
          .where("tag", "in", removed)
          .execute();
      if (added.length > 0)
        await tx
          .insertInto("deviceTags")
          .values(added.map((tag) => ({ deviceId, projectId, tag })))
          .execute();
      if (removed.length > 0 || added.length > 0)
        await tx.updateTable("devices").set({ updatedAt: now }).where("id", "=", deviceId).execute();
      return { before, after };
    });

  return {
    /** The tags of every device of a visible project, by device id (devices without tags left out). */
    byDevice: async (viewer: Viewer, projectId: string): Promise<Map<string, string[]>> => {
      const rows = await db
        .selectFrom("deviceTags")
        .select(["deviceId", "tag"])
        .where("projectId", "=", projectId)
        .where("projectId", "in", visibleProjectIds(db, viewer))
        .orderBy("deviceId")
        .orderBy("tag")
        .execute();
      const map = new Map<string, string[]>();
      for (const { deviceId, tag } of rows) {
        const list = map.get(deviceId);
        if (list) list.push(tag);
        else map.set(deviceId, [tag]);
      }
      return map;
    },
    /** One visible device's tags (empty when it has none or is not visible). */
    ofDevice: async (viewer: Viewer, projectId: string, deviceId: string) =>
      (await visibleDevice(viewer, projectId, deviceId).executeTakeFirst()) ? tagsOf(db, deviceId) : [],
    update,
  };
}
