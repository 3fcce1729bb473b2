import type { ConnectionState } from "@sdk/protocol";
import type { CompiledQuery, Expression, ExpressionBuilder, Kysely, Selectable, SqlBool } from "kysely";
import type { DB, DevicesTable } from "../db/schema.ts";
import { connectionRowsPatienceMs, type Lane, type WriteBatcher } from "../db/write-batcher.ts";
import { type Viewer, visibleProjectIds } from "./viewer.ts";

export type DeviceRow = Omit<Selectable<DevicesTable>, "secretHash" | "instanceId" | "claimSeq">;

const columns = [
  "id",
  "projectId",
  "name",
  "board",
  "status",
  "lastSeenAt",
  "firmwareVersion",
  "createdAt",
  "updatedAt",
] as const;

interface Presence {
  id: string;
  status: ConnectionState;
  lastSeenAt: number;
  firmwareVersion?: string;
  /** The instance writing: online, it serves the device now; offline, it served it until now. */
  instanceId: string;
  /**
   * Online in a cluster: the connection's generation; the write applies only while it is the
   * device's newest (claimSeq), so an older connection's late hello never takes the device back.
   */
  generation?: number;
  /**
   * Set by the write: the change did not apply (offline: another instance serves the device now;
   * online: a newer connection of the device exists).
   */
  spared?: boolean;
}

/** A connection's request for its generation (a cluster); `generation` is set by the write. */
interface Generation {
  id: string;
  generation?: number;
}

/** A device marked offline for lack of a connection (a crash, a dead instance), for its log line. */
export interface LostDevice {
  id: string;
  projectId: string;
  lastSeenAt: number | null;
}

type AuthRow = Pick<Selectable<DevicesTable>, "id" | "projectId" | "board" | "secretHash">;

/** Ids in one `IN (…)` (well below SQLite's and Postgres' parameter limits). */
const maxIdsPerStatement = 500;
/** How long a connection attempt's credential check waits for others to share its query. */
const authPatienceMs = 2;

export function devicesRepository(db: Kysely<DB>, batcher: WriteBatcher) {
  const scoped = (viewer: Viewer, projectId: string) =>
    db
      .selectFrom("devices")
      .select(columns)
      .where("projectId", "=", projectId)
      .where("projectId", "in", visibleProjectIds(db, viewer));

  /**
   * The devices behind the connection attempts of 2 ms, read together: after a restart thousands
   * of boards authenticate within a second or two, about one per turn of the event loop, and one
   * query per board cost more than its answer.
   */
  let authWaiting: Map<string, ((row: AuthRow | undefined, error?: unknown) => void)[]> | null = null;
  const readAuth = async () => {
    const waiting = authWaiting!;
    authWaiting = null;
    const ids = [...waiting.keys()];
    try {
      const found = new Map<string, AuthRow>();
      for (let i = 0; i < ids.length; i += maxIdsPerStatement) {
        const rows = await db
          .selectFrom("devices")
          .select(["id", "projectId", "board", "secretHash"])
          .where("id", "in", ids.slice(i, i + maxIdsPerStatement))
          .execute();
        for (const row of rows) found.set(row.id, row);
      }
      for (const [id, callbacks] of waiting) for (const settle of callbacks) settle(found.get(id));
    } catch (error) {
      for (const callbacks of waiting.values()) for (const settle of callbacks) settle(undefined, error);
    }
  };

  /**
   * Presence changes of one commit: the latest per device (a later change keeps an earlier
   * firmware version it does not set), then one UPDATE per distinct set of values for all the
   * devices that share it, not one per device. The devices of one set are seen last at the newest
   * of their times: a commit spans a few milliseconds, and a reconnect storm's hellos then share
   * one statement.
   * Online records the serving instance (in a cluster only for the device's newest connection: its
   * generation is still the device's claimSeq); offline applies only where that instance (or none)
   * serves the device, so a device another instance took over meanwhile stays online.
   */
  const presenceLane: Lane<Presence> = {
    patienceMs: connectionRowsPatienceMs,
    plan(rows) {
      const latest = new Map<string, Presence>();
      const byId = new Map<string, Presence[]>();
      /** Online writes with a generation (a cluster's hellos): the newest per device, written last. */
      const claims = new Map<string, Presence>();
      for (const row of rows) {
        row.spared = false;
        if (row.generation !== undefined) {
          // Two connections' hellos in one commit: the newer one's applies, the older's does not.
          const other = claims.get(row.id);
          if (other && other.generation! > row.generation) {
            row.spared = true;
            continue;
          }
          if (other) other.spared = true;
          claims.set(row.id, row);
          continue;
        }
        const earlier = latest.get(row.id);
        latest.set(
          row.id,
          earlier && row.firmwareVersion === undefined
            ? { ...row, firmwareVersion: earlier.firmwareVersion }
            : row,
        );
        const same = byId.get(row.id);
        if (same) same.push(row);
        else byId.set(row.id, [row]);
      }
      const statements: CompiledQuery[] = [];
      /** The statements whose returned ids tell which rows applied: by index, their ids and rows. */
      const checks = new Map<number, { some: string[]; spareOf: (id: string) => Presence[] }>();
      // (A hello queued after an offline of the same device: the offline first, then the hello.)
      for (const changes of [latest, claims]) {
        const groups = new Map<string, { values: Omit<Presence, "id" | "spared">; ids: string[] }>();
        for (const { id, spared: _, ...values } of changes.values()) {
          const key = `${values.status}\u0000${values.firmwareVersion ?? "\u0000"}\u0000${values.instanceId}`;
          const group = groups.get(key);
          if (!group) groups.set(key, { values: { ...values }, ids: [id] });
          else {
            group.ids.push(id);
            group.values.lastSeenAt = Math.max(group.values.lastSeenAt, values.lastSeenAt);
          }
        }
        for (const { values, ids } of groups.values()) {
          for (let i = 0; i < ids.length; i += maxIdsPerStatement) {
            const some = ids.slice(i, i + maxIdsPerStatement);
            const update = db
              .updateTable("devices")
              .set({
                status: values.status,
                lastSeenAt: values.lastSeenAt,
                instanceId: values.status === "online" ? values.instanceId : null,
                ...(values.firmwareVersion === undefined ? {} : { firmwareVersion: values.firmwareVersion }),
              })
              .where("id", "in", some);
            if (values.status === "online" && changes === latest) {
              statements.push(update.compile());
              continue;
            }
            statements.push(
              (changes === claims
                ? update.where((eb) =>
                    eb(
                      eb.refTuple("id", "claimSeq"),
                      "in",
                      some.map((id) => eb.tuple(id, claims.get(id)?.generation ?? 0)),
                    ),
                  )
                : update.where((eb) =>
                    eb.or([eb("instanceId", "=", values.instanceId), eb("instanceId", "is", null)]),
                  )
              )
                .returning("id")
                .compile(),
            );
            const spareOf = (id: string) => (changes === claims ? [claims.get(id)!] : (byId.get(id) ?? []));
            checks.set(statements.length - 1, { some, spareOf });
          }
        }
      }
      return {
        statements,
        committed(results) {
          for (const [index, { some, spareOf }] of checks) {
            const applied = results[index]!.rows as { id: string }[];
            if (applied.length === some.length) continue;
            const done = new Set(applied.map((r) => r.id));
            for (const id of some) if (!done.has(id)) for (const row of spareOf(id)) row.spared = true;
          }
        },
      };
    },
  };

  /**
   * Each authenticated connection of a cluster takes the next number of its device's claimSeq:
   * the order of the device's connections across instances. Group-committed with the presence.
   */
  const generationLane: Lane<Generation> = {
    patienceMs: connectionRowsPatienceMs,
    plan(rows) {
      const counts = new Map<string, number>();
      for (const row of rows) counts.set(row.id, (counts.get(row.id) ?? 0) + 1);
      const byCount = new Map<number, string[]>();
      for (const [id, count] of counts) {
        const ids = byCount.get(count);
        if (ids) ids.push(id);
        else byCount.set(count, [id]);
      }
      const statements: CompiledQuery[] = [];
      for (const [count, ids] of byCount)
        for (let i = 0; i < ids.length; i += maxIdsPerStatement)
          statements.push(
            db
              .updateTable("devices")
              .set((eb) => ({ claimSeq: eb("claimSeq", "+", count) }))
              .where("id", "in", ids.slice(i, i + maxIdsPerStatement))
              .returning(["id", "claimSeq"])
              .compile(),
          );
      return {
        statements,
        committed(results) {
          const top = new Map<string, number>();
          for (const result of results)
            for (const r of result.rows as { id: string; claimSeq: number | bigint }[])
              top.set(r.id, Number(r.claimSeq));
          // Several connections of one device in one commit: numbered in the order they came.
          const taken = new Map<string, number>();
          for (const row of rows) {
            const last = top.get(row.id);
            if (last === undefined) continue;
            const n = taken.get(row.id) ?? 0;
            taken.set(row.id, n + 1);
            row.generation = last - counts.get(row.id)! + 1 + n;
          }
        },
      };
    },
  };

  /** Marks offline the online devices that match `where`; returns them. */
  const markOffline = (where: (eb: ExpressionBuilder<DB, "devices">) => Expression<SqlBool>) =>
    db
      .updateTable("devices")
      .set({ status: "offline", instanceId: null })
      .where("status", "=", "online")
      .where(where)
      .returning(["id", "projectId", "lastSeenAt"])
      .execute() as Promise<LostDevice[]>;

  return {
    /** `tag`: only the devices with this tag. */
    list: (viewer: Viewer, projectId: string, tag?: string) => {
      let query = scoped(viewer, projectId);
      if (tag !== undefined)
        query = query.where(
          "id",
          "in",
          db
            .selectFrom("deviceTags")
            .select("deviceTags.deviceId")
            .where("deviceTags.projectId", "=", projectId)
            .where("deviceTags.tag", "=", tag),
        );
      return query.orderBy("createdAt").orderBy("id").execute();
    },
    find: (viewer: Viewer, projectId: string, id: string) =>
      scoped(viewer, projectId).where("id", "=", id).executeTakeFirst(),
    /** For the Home Assistant bridge (no viewer): the devices of a project. */
    inProject: (projectId: string) =>
      db.selectFrom("devices").select(columns).where("projectId", "=", projectId).orderBy("id").execute(),
    /** The caller has already checked that the project is visible. */
    insert: async (row: Omit<Selectable<DevicesTable>, "status" | "instanceId" | "claimSeq">) => {
      await db.insertInto("devices").values(row).execute();
    },
    rename: (viewer: Viewer, projectId: string, id: string, name: string, now: number) =>
      db
        .updateTable("devices")
        .set({ name, updatedAt: now })
        .where("id", "=", id)
        .where("projectId", "=", projectId)
        .where("projectId", "in", visibleProjectIds(db, viewer))
        .returning(columns)
        .executeTakeFirst(),
    setSecretHash: async (viewer: Viewer, projectId: string, id: string, secretHash: string, now: number) => {
      const result = await db
        .updateTable("devices")
        .set({ secretHash, updatedAt: now })
        .where("id", "=", id)
        .where("projectId", "=", projectId)
        .where("projectId", "in", visibleProjectIds(db, viewer))
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },
    /** Many devices with their tags in one transaction: all are added or none. */
    insertMany: (
      rows: (Omit<Selectable<DevicesTable>, "status" | "instanceId" | "claimSeq"> & { tags: string[] })[],
    ) =>
      db.transaction().execute(async (tx) => {
        for (const { tags, ...row } of rows) {
          await tx.insertInto("devices").values(row).execute();
          if (tags.length > 0)
            await tx
              .insertInto("deviceTags")
              .values(tags.map((tag) => ({ deviceId: row.id, projectId: row.projectId, tag })))
              .execute();
        }
      }),
    /** For the device socket: the device behind a connection attempt, by id alone. */
    findForAuth: (id: string) =>
      new Promise<AuthRow | undefined>((resolve, reject) => {
        if (!authWaiting) {
          authWaiting = new Map();
          setTimeout(readAuth, authPatienceMs);
        }
        const callbacks = authWaiting.get(id) ?? [];
        callbacks.push((row, error) => (error === undefined ? resolve(row) : reject(error)));
        authWaiting.set(id, callbacks);
      }),
    /**
     * For the device socket: presence changes reported by the authenticated connection, written by
     * instance `instanceId`. Group-committed: after a restart thousands of boards say hello at once.
     * False when the change did not apply: offline, another instance serves the device now; online
     * with a generation, a newer connection of the device exists (presenceLane).
     */
    setPresence: async (
      id: string,
      fields: {
        status: ConnectionState;
        lastSeenAt: number;
        firmwareVersion?: string;
        instanceId: string;
        generation?: number;
      },
    ): Promise<boolean> => {
      const row: Presence = { id, ...fields };
      await batcher.add(presenceLane, row);
      return !row.spared;
    },
    /**
     * In a cluster, for an authenticated connection: its generation (the device's next claimSeq),
     * or undefined when the device no longer exists.
     */
    nextGeneration: async (id: string): Promise<number | undefined> => {
      const row: Generation = { id };
      await batcher.add(generationLane, row);
      return row.generation;
    },
    /**
     * At boot no device is connected yet. Returns the devices that were still online: the server
     * stopped without closing their connections (a crash, a kill, a power cut).
     */
    markAllOffline: () => markOffline((eb) => eb.lit(true)),
    /**
     * At the boot of a cluster's instance: the online devices no live instance serves (their
     * instance died, or none was recorded) go offline; returns them. Those of `live` instances stay.
     */
    markOfflineExcept: (live: string[]) =>
      markOffline((eb) =>
        live.length === 0
          ? eb.lit(true)
          : eb.or([eb("instanceId", "is", null), eb("instanceId", "not in", live)]),
      ),
    /** Ids of the devices in these projects (to disconnect them before the projects go). */
    idsInProjects: async (projectIds: string[]) =>
      projectIds.length === 0
        ? []
        : (await db.selectFrom("devices").select("id").where("projectId", "in", projectIds).execute()).map(
            (r) => r.id,
          ),
    delete: async (viewer: Viewer, projectId: string, id: string) => {
      const result = await db
        .deleteFrom("devices")
        .where("id", "=", id)
        .where("projectId", "=", projectId)
        .where("projectId", "in", visibleProjectIds(db, viewer))
        .executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },
  };
}
