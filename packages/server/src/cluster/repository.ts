import { type Kysely, sql } from "kysely";
import { databaseNow } from "../db/now.ts";
import type { DB } from "../db/schema.ts";
import type { LostDevice } from "../repositories/devices.ts";

/** Ids in one `IN (…)` (well below PostgreSQL's parameter limit). */
const maxIdsPerStatement = 500;

/** Takes offline the devices online on the instance; returns them. */
const offlineOn = (db: Kysely<DB>, instanceId: string): Promise<LostDevice[]> =>
  db
    .updateTable("devices")
    .set({ status: "offline", instanceId: null })
    .where("status", "=", "online")
    .where("instanceId", "=", instanceId)
    .returning(["id", "projectId", "lastSeenAt"])
    .execute();

/**
 * The cluster's SQL (docs/scaling.md): instance leases, and the ownership of devices as the
 * registry and the lease read it. Presence writes otherwise belong to the devices repository.
 * Lease times are the database's clock (databaseNow), never an instance's: instances' clocks differ.
 */
export function clusterRepository(db: Kysely<DB>) {
  const now = () => databaseNow(db);
  const until = (leaseMs: number) => sql<number>`${now()} + ${leaseMs}`;
  return {
    /**
     * The instance is alive for `leaseMs` from now; a restart with the same INSTANCE_ID takes its
     * row over.
     */
    upsertInstance: (id: string, leaseMs: number) =>
      db
        .insertInto("instances")
        .values({ id, startedAt: now(), leaseUntil: until(leaseMs) })
        .onConflict((oc) => oc.column("id").doUpdateSet({ startedAt: now(), leaseUntil: until(leaseMs) }))
        .execute(),
    /** Alive for `leaseMs` from now. False when the row is gone: other instances took this one for dead. */
    renewInstance: async (id: string, leaseMs: number) => {
      const result = await db
        .updateTable("instances")
        .set({ leaseUntil: until(leaseMs) })
        .where("id", "=", id)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },
    /**
     * A clean stop: removes the instance's row and, in the same transaction, takes offline the
     * devices still online on it (a hello that completed while it stopped); returns them.
     */
    deleteInstance: (id: string) =>
      db.transaction().execute(async (tx) => {
        await tx.deleteFrom("instances").where("id", "=", id).execute();
        return offlineOn(tx, id);
      }),
    /**
     * Removes the instances whose lease has ended and marks their online devices offline, in one
     * transaction (a failure halfway leaves both for the next sweep). When several instances sweep
     * at once, each dead row, and so each device, is returned to exactly one of them.
     */
    sweepExpired: () =>
      db.transaction().execute(async (tx) => {
        const dead = (
          await tx.deleteFrom("instances").where("leaseUntil", "<", now()).returning("id").execute()
        ).map((r) => r.id);
        const lost: { instanceId: string; devices: LostDevice[] }[] = [];
        for (const instanceId of dead) lost.push({ instanceId, devices: await offlineOn(tx, instanceId) });
        return lost;
      }),
    /** The instance serving the device, per its presence row; null when it is offline. */
    ownerOf: async (deviceId: string) => {
      const row = await db
        .selectFrom("devices")
        .select(["status", "instanceId"])
        .where("id", "=", deviceId)
        .executeTakeFirst();
      return row?.status === "online" ? (row.instanceId ?? null) : null;
    },
    /** The instances alive now other than `self`. */
    liveInstances: async (self: string) =>
      (
        await db
          .selectFrom("instances")
          .select("id")
          .where("leaseUntil", ">=", now())
          .where("id", "!=", self)
          .execute()
      ).map((r) => r.id),
    /**
     * After this instance was taken for dead while it was not: its connections' devices are its own
     * again, those still offline with no instance and whose newest connection is still this
     * instance's (their generation is the device's claimSeq). Returns the ids taken back; a device
     * that reconnected elsewhere meanwhile is not.
     */
    reclaim: async (self: string, connections: { deviceId: string; generation: number }[]) => {
      const taken: string[] = [];
      for (let i = 0; i < connections.length; i += maxIdsPerStatement) {
        const some = connections.slice(i, i + maxIdsPerStatement);
        const rows = await db
          .updateTable("devices")
          .set({ status: "online", instanceId: self })
          .where("status", "=", "offline")
          .where("instanceId", "is", null)
          .where((eb) =>
            eb(
              eb.refTuple("id", "claimSeq"),
              "in",
              some.map((c) => eb.tuple(c.deviceId, c.generation)),
            ),
          )
          .returning("id")
          .execute();
        taken.push(...rows.map((r) => r.id));
      }
      return taken;
    },
  };
}
export type ClusterRepository = ReturnType<typeof clusterRepository>;
