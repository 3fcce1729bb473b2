import type { Kysely } from "kysely";
import { prepare, prepareRows } from "../db/prepared.ts";
import type { DB } from "../db/schema.ts";
import type { Lane, WriteBatcher } from "../db/write-batcher.ts";
import { isEntryOf } from "./page-cursor.ts";
import { type Viewer, visibleProjectIds } from "./viewer.ts";

export interface StateRow {
  historyId: string;
  deviceId: string;
  entityId: string;
  value: string;
  at: number;
  /** Trim this entity's history to its newest `pruneTo` entries in the same commit. */
  pruneTo?: number;
}

export function deviceStateRepository(db: Kysely<DB>, batcher: WriteBatcher) {
  const upsertLatest = prepareRows<{ deviceId: string; entityId: string; value: string; updatedAt: number }>(
    ["deviceId", "entityId", "value", "updatedAt"],
    (rows) =>
      db
        .insertInto("deviceState")
        .values(rows)
        .onConflict((oc) =>
          oc.columns(["deviceId", "entityId"]).doUpdateSet((eb) => ({
            value: eb.ref("excluded.value"),
            updatedAt: eb.ref("excluded.updatedAt"),
          })),
        ),
  );
  const insertHistory = prepareRows<{
    id: string;
    deviceId: string;
    entityId: string;
    value: string;
    at: number;
  }>(["id", "deviceId", "entityId", "value", "at"], (rows) =>
    db.insertInto("deviceStateHistory").values(rows),
  );
  const pruneEntity = prepare(["deviceId", "entityId", "keep"], (a) =>
    db
      .deleteFrom("deviceStateHistory")
      .where("deviceId", "=", a.deviceId)
      .where("entityId", "=", a.entityId)
      .where("id", "<=", (eb) =>
        eb
          .selectFrom("deviceStateHistory")
          .select("id")
          .where("deviceId", "=", a.deviceId)
          .where("entityId", "=", a.entityId)
          .orderBy("id", "desc")
          .offset(a.keep)
          .limit(1),
      ),
  );

  /**
   * One commit's state rows: the latest value per entity (a burst of values for one entity writes
   * it once), every value into the history, and the trims asked for, in a few prepared statements.
   */
  const stateLane: Lane<StateRow> = {
    plan(rows) {
      const latest = new Map<string, StateRow>();
      const prune = new Map<string, StateRow>();
      for (const row of rows) {
        const key = `${row.deviceId}\u0000${row.entityId}`;
        latest.delete(key); // keeps the map in the order of each entity's last value
        latest.set(key, row);
        if (row.pruneTo !== undefined) prune.set(key, row);
      }
      const upserts = [...latest.values()].map((r) => ({
        deviceId: r.deviceId,
        entityId: r.entityId,
        value: r.value,
        updatedAt: r.at,
      }));
      const history = rows.map((r) => ({
        id: r.historyId,
        deviceId: r.deviceId,
        entityId: r.entityId,
        value: r.value,
        at: r.at,
      }));
      const statements = [...upsertLatest(upserts), ...insertHistory(history)];
      for (const r of prune.values())
        statements.push(pruneEntity({ deviceId: r.deviceId, entityId: r.entityId, keep: r.pruneTo }));
      return { statements };
    },
  };

  return {
    /**
     * Stores the latest value of an entity and appends it to the entity's history, with the next
     * group commit; settles when committed.
     */
    record: (row: StateRow) => batcher.add(stateLane, row),
    /** For the Home Assistant bridge (no viewer): the latest value of each entity of a device. */
    latestOf: async (deviceId: string) => {
      await batcher.barrier();
      return db
        .selectFrom("deviceState")
        .select(["entityId", "value"])
        .where("deviceId", "=", deviceId)
        .execute();
    },
    latest: async (viewer: Viewer, projectId: string, deviceId: string) => {
      await batcher.barrier(); // values already published to watchers are readable here too
      return db
        .selectFrom("deviceState")
        .innerJoin("devices", "devices.id", "deviceState.deviceId")
        .select(["deviceState.entityId", "deviceState.value", "deviceState.updatedAt"])
        .where("deviceState.deviceId", "=", deviceId)
        .where("devices.projectId", "=", projectId)
        .where("devices.projectId", "in", visibleProjectIds(db, viewer))
        .orderBy("deviceState.entityId")
        .execute();
    },
    history: async (
      viewer: Viewer,
      projectId: string,
      deviceId: string,
      entityId: string,
      limit: number,
      before?: string,
    ) => {
      await batcher.barrier();
      if (
        before !== undefined &&
        !(await isEntryOf(db, "deviceStateHistory", before, { deviceId, entityId }))
      )
        return null;
      let query = db
        .selectFrom("deviceStateHistory")
        .innerJoin("devices", "devices.id", "deviceStateHistory.deviceId")
        .select(["deviceStateHistory.id", "deviceStateHistory.value", "deviceStateHistory.at"])
        .where("deviceStateHistory.deviceId", "=", deviceId)
        .where("deviceStateHistory.entityId", "=", entityId)
        .where("devices.projectId", "=", projectId)
        .where("devices.projectId", "in", visibleProjectIds(db, viewer));
      if (before !== undefined) query = query.where("deviceStateHistory.id", "<", before);
      return query.orderBy("deviceStateHistory.id", "desc").limit(limit).execute();
    },
    countEntities: async (deviceId: string) =>
      Number(
        (
          await db
            .selectFrom("deviceState")
            .where("deviceId", "=", deviceId)
            .select((eb) => eb.fn.countAll().as("n"))
            .executeTakeFirstOrThrow()
        ).n,
      ),
    /** Keeps the newest `keep` history entries of one entity. */
    pruneHistory: async (deviceId: string, entityId: string, keep: number) => {
      await db.executeQuery(pruneEntity({ deviceId, entityId, keep }));
    },
    /** `null` while the write queue has room, else a promise that resolves when it has. */
    room: () => batcher.room(),
  };
}
