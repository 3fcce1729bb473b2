import type { Kysely, Selectable } from "kysely";
import type { DB } from "../db/schema.ts";

/** Ids in one `IN (…)` (well below PostgreSQL's parameter limit). */
const maxIdsPerStatement = 500;

/**
 * The cluster's SQL (docs/scaling.md): instance leases, and the ownership of devices as the
 * registry and the lease read it. Presence writes otherwise belong to the devices repository.
 */
export function clusterRepository(db: Kysely<DB>) {
  return {
    /** The instance is alive until `leaseUntil`; a restart with the same INSTANCE_ID takes its row over. */
    upsertInstance: ({ id, startedAt, leaseUntil }: Selectable<DB["instances"]>) =>
      db
        .insertInto("instances")
        .values({ id, startedAt, leaseUntil })
        .onConflict((oc) => oc.column("id").doUpdateSet({ startedAt, leaseUntil }))
        .execute(),
    /** False when the row is gone: other instances took this one for dead. */
    renewInstance: async (id: string, leaseUntil: number) => {
      const result = await db
        .updateTable("instances")
        .set({ leaseUntil })
        .where("id", "=", id)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },
    deleteInstance: (id: string) => db.deleteFrom("instances").where("id", "=", id).execute(),
    /**
     * Removes the instances whose lease ended before `now`. One statement: when several instances
     * sweep at once, each dead row is returned to exactly one of them.
     */
    deleteExpired: async (now: number) =>
      (await db.deleteFrom("instances").where("leaseUntil", "<", now).returning("id").execute()).map(
        (r) => r.id,
      ),
    /** The instance serving the device, per its presence row; null when it is offline. */
    ownerOf: async (deviceId: string) => {
      const row = await db
        .selectFrom("devices")
        .select(["status", "instanceId"])
        .where("id", "=", deviceId)
        .executeTakeFirst();
      return row?.status === "online" ? (row.instanceId ?? null) : null;
    },
    /** The instances alive at `now` other than `self`. */
    liveInstances: async (self: string, now: number) =>
      (
        await db
          .selectFrom("instances")
          .select("id")
          .where("leaseUntil", ">=", now)
          .where("id", "!=", self)
          .execute()
      ).map((r) => r.id),
    /** After this instance was taken for dead while it was not: its devices are its own again. */
    reclaim: async (self: string, deviceIds: string[]) => {
      for (let i = 0; i < deviceIds.length; i += maxIdsPerStatement)
        await db
          .updateTable("devices")
          .set({ status: "online", instanceId: self })
          .where("id", "in", deviceIds.slice(i, i + maxIdsPerStatement))
          .execute();
    },
  };
}
export type ClusterRepository = ReturnType<typeof clusterRepository>;
