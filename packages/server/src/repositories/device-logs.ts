import type { Kysely, Selectable } from "kysely";
import type { DB, DeviceLogsTable } from "../db/schema.ts";
import type { WriteBatcher } from "../db/write-batcher.ts";
import { isEntryOf } from "./page-cursor.ts";
import { type Viewer, visibleProjectIds } from "./viewer.ts";

export type DeviceLogRow = Selectable<DeviceLogsTable>;

export function deviceLogsRepository(db: Kysely<DB>, batcher: WriteBatcher) {
  return {
    /** Device- and server-originated entries; the device is identified by its authenticated connection. */
    insert: (row: DeviceLogRow) =>
      batcher.run(async (tx) => {
        await tx.insertInto("deviceLogs").values(row).execute();
      }),
    /**
     * Newest first; `before` is the id of the last entry of the previous page. `null` when `before`
     * is not an entry of this device (unknown, pruned, or another device's).
     */
    list: async (viewer: Viewer, projectId: string, deviceId: string, limit: number, before?: string) => {
      await batcher.barrier(); // entries already published to watchers are readable here too
      if (before !== undefined && !(await isEntryOf(db, "deviceLogs", before, { deviceId }))) return null;
      let query = db
        .selectFrom("deviceLogs")
        .innerJoin("devices", "devices.id", "deviceLogs.deviceId")
        .selectAll("deviceLogs")
        .where("deviceLogs.deviceId", "=", deviceId)
        .where("devices.projectId", "=", projectId)
        .where("devices.projectId", "in", visibleProjectIds(db, viewer));
      if (before !== undefined) query = query.where("deviceLogs.id", "<", before);
      return query.orderBy("deviceLogs.id", "desc").limit(limit).execute();
    },
    /** Keeps the newest `keep` entries of a device. */
    pruneDevice: async (deviceId: string, keep: number) => {
      const cutoff = await db
        .selectFrom("deviceLogs")
        .select("id")
        .where("deviceId", "=", deviceId)
        .orderBy("id", "desc")
        .offset(keep)
        .limit(1)
        .executeTakeFirst();
      if (cutoff)
        await db
          .deleteFrom("deviceLogs")
          .where("deviceId", "=", deviceId)
          .where("id", "<=", cutoff.id)
          .execute();
    },
    pruneOlderThan: async (cutoff: number) => {
      await db.deleteFrom("deviceLogs").where("at", "<", cutoff).execute();
    },
  };
}
