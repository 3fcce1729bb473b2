import type { Kysely, Selectable } from "kysely";
import { prepare, prepareRows } from "../db/prepared.ts";
import type { DB, DeviceLogsTable } from "../db/schema.ts";
import { connectionRowsPatienceMs, type Lane, type WriteBatcher } from "../db/write-batcher.ts";
import { isEntryOf } from "./page-cursor.ts";
import { type Viewer, visibleProjectIds } from "./viewer.ts";

export type DeviceLogRow = Selectable<DeviceLogsTable>;

export function deviceLogsRepository(db: Kysely<DB>, batcher: WriteBatcher) {
  const insertRows = prepareRows<DeviceLogRow>(
    ["id", "deviceId", "at", "level", "source", "message"],
    (rows) => db.insertInto("deviceLogs").values(rows),
  );
  const pruneTo = prepare(["deviceId", "keep"], (a) =>
    db
      .deleteFrom("deviceLogs")
      .where("deviceId", "=", a.deviceId)
      .where("id", "<=", (eb) =>
        eb
          .selectFrom("deviceLogs")
          .select("id")
          .where("deviceId", "=", a.deviceId)
          .orderBy("id", "desc")
          .offset(a.keep)
          .limit(1),
      ),
  );
  /** One commit's log lines in a few multi-row inserts, then the trims asked for (once per device). */
  const lane: Lane<{ row: DeviceLogRow; pruneTo?: number }> = {
    patienceMs: connectionRowsPatienceMs,
    plan(items) {
      const statements = insertRows(items.map((i) => i.row));
      const prune = new Map<string, number>();
      for (const i of items) if (i.pruneTo !== undefined) prune.set(i.row.deviceId, i.pruneTo);
      for (const [deviceId, keep] of prune) statements.push(pruneTo({ deviceId, keep }));
      return { statements };
    },
  };

  return {
    /**
     * Device- and server-originated entries; the device is identified by its authenticated
     * connection. With `pruneTo`, the device's log is trimmed to its newest `pruneTo` entries in the
     * same commit. Settles when committed.
     */
    insert: (row: DeviceLogRow, options: { pruneTo?: number } = {}) =>
      batcher.add(lane, { row, pruneTo: options.pruneTo }),
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
      await db.executeQuery(pruneTo({ deviceId, keep }));
    },
    /** `null` while the write queue has room, else a promise that resolves when it has. */
    room: () => batcher.room(),
  };
}
