import type { Kysely } from "kysely";
import type { DB, InstancesTable } from "../db/schema.ts";

/** A device that went offline with the instance that served it. */
export interface LostDevice {
  id: string;
  projectId: string;
  lastSeenAt: number | null;
}

const lostColumns = ["id", "projectId", "lastSeenAt"] as const;

/** Ids in one `IN (…)` (well below PostgreSQL's parameter limit). */
const maxIdsPerStatement = 500;

/**
 * The cluster's SQL (docs/scaling.md): instance leases, and the presence changes that follow from
 * an instance's life and death. A device's presence otherwise belongs to the devices repository.
 */
export function clusterRepository(db: Kysely<DB>) {
  return {
    /** The instance is alive until `leaseUntil`; a restart with the same INSTANCE_ID takes its row over. */
    upsertInstance: ({ id, startedAt, leaseUntil }: InstancesTable) =>
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
    /**
     * The devices a dead (or stopped) instance served go offline, once: a device that another
     * instance serves by now keeps its row.
     */
    offlineOfInstance: (instanceId: string) =>
      db
        .updateTable("devices")
        .set({ status: "offline", instanceId: null })
        .where("instanceId", "=", instanceId)
        .where("status", "=", "online")
        .returning(lostColumns)
        .execute(),
    /**
     * At boot of an instance: the devices still online for no live instance (one that stopped
     * without closing them, or this instance's previous life) go offline; those of live instances
     * stay as they are.
     */
    offlineUnlessAlive: (self: string, now: number) =>
      db
        .updateTable("devices")
        .set({ status: "offline", instanceId: null })
        .where("status", "=", "online")
        .where((eb) =>
          eb.or([
            eb("instanceId", "is", null),
            eb("instanceId", "=", self),
            eb(
              "instanceId",
              "not in",
              eb.selectFrom("instances").select("id").where("leaseUntil", ">=", now),
            ),
          ]),
        )
        .returning(lostColumns)
        .execute(),
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
