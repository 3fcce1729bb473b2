import type { Kysely } from "kysely";
import type { DB } from "../db/schema.ts";
import type { WriteBatcher } from "../db/write-batcher.ts";
import { isEntryOf } from "./page-cursor.ts";
import { type Viewer, visibleProjectIds } from "./viewer.ts";

export function deviceStateRepository(db: Kysely<DB>, batcher: WriteBatcher) {
  return {
    /** Stores the latest value of an entity and appends it to the entity's history, in one transaction. */
    record: (row: { historyId: string; deviceId: string; entityId: string; value: string; at: number }) =>
      batcher.run(async (tx) => {
        await tx
          .insertInto("deviceState")
          .values({ deviceId: row.deviceId, entityId: row.entityId, value: row.value, updatedAt: row.at })
          .onConflict((oc) =>
            oc.columns(["deviceId", "entityId"]).doUpdateSet({ value: row.value, updatedAt: row.at }),
          )
          .execute();
        await tx
          .insertInto("deviceStateHistory")
          .values({
            id: row.historyId,
            deviceId: row.deviceId,
            entityId: row.entityId,
            value: row.value,
            at: row.at,
          })
          .execute();
      }),
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
      const cutoff = await db
        .selectFrom("deviceStateHistory")
        .select("id")
        .where("deviceId", "=", deviceId)
        .where("entityId", "=", entityId)
        .orderBy("id", "desc")
        .offset(keep)
        .limit(1)
        .executeTakeFirst();
      if (cutoff) {
        await db
          .deleteFrom("deviceStateHistory")
          .where("deviceId", "=", deviceId)
          .where("entityId", "=", entityId)
          .where("id", "<=", cutoff.id)
          .execute();
      }
    },
  };
}
