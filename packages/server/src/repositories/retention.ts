import { type Kysely, sql } from "kysely";
import type { DB } from "../db/schema.ts";
import { type Viewer, visibleProjectIds } from "./viewer.ts";

export interface RetentionRules {
  logMaxEntries: number;
  logMaxAgeDays: number;
  stateHistoryMaxEntries: number;
  stateHistoryMaxAgeDays: number;
}

const deleted = (result: { numDeletedRows: bigint } | undefined) => Number(result?.numDeletedRows ?? 0);

/**
 * Retention: each project's rules and the sweeper's deletes. Every statement reads only what it
 * returns or removes (at most `limit` rows, or a device's kept count) through the per-device
 * indexes on sortable ids, so none holds the database for long however big the tables are.
 */
export function retentionRepository(db: Kysely<DB>, dialect: "sqlite" | "postgres") {
  return {
    /** The project's own rules, `undefined` when it uses the defaults (or is not the viewer's). */
    find: (viewer: Viewer, projectId: string) =>
      db
        .selectFrom("projectRetention")
        .selectAll()
        .where("projectId", "=", projectId)
        .where("projectId", "in", visibleProjectIds(db, viewer))
        .executeTakeFirst(),
    save: async (projectId: string, rules: RetentionRules, now: number) => {
      await db
        .insertInto("projectRetention")
        .values({ projectId, ...rules, updatedAt: now })
        .onConflict((oc) => oc.column("projectId").doUpdateSet({ ...rules, updatedAt: now }))
        .execute();
    },
    /** Every project with its own rules (`null` columns: the defaults). */
    allProjects: () =>
      db
        .selectFrom("projects")
        .leftJoin("projectRetention", "projectRetention.projectId", "projects.id")
        .select([
          "projects.id as projectId",
          "projectRetention.logMaxEntries",
          "projectRetention.logMaxAgeDays",
          "projectRetention.stateHistoryMaxEntries",
          "projectRetention.stateHistoryMaxAgeDays",
        ])
        .orderBy("projects.id")
        .execute(),

    /** The project's devices, for the per-device passes. */
    deviceIds: async (projectId: string) =>
      (
        await db.selectFrom("devices").select("id").where("projectId", "=", projectId).orderBy("id").execute()
      ).map((r) => r.id),
    /** The project's state entities (every history value has its entity's latest value). */
    entities: (projectId: string) =>
      db
        .selectFrom("deviceState")
        .innerJoin("devices", "devices.id", "deviceState.deviceId")
        .select(["deviceState.deviceId", "deviceState.entityId"])
        .where("devices.projectId", "=", projectId)
        .orderBy("deviceState.deviceId")
        .orderBy("deviceState.entityId")
        .execute(),
    /**
     * The id of the device's `keep`-th newest log entry (the oldest to keep), `undefined` with
     * fewer: reads at most `keep` entries of the (deviceId, id) index.
     */
    oldestLogKept: async (deviceId: string, keep: number) =>
      (
        await db
          .selectFrom("deviceLogs")
          .select("id")
          .where("deviceId", "=", deviceId)
          .orderBy("id", "desc")
          .offset(Math.max(0, keep - 1))
          .limit(1)
          .executeTakeFirst()
      )?.id,
    /** Removes up to `limit` of the device's entries with an id below `before`, oldest first. */
    deleteLogsBefore: async (deviceId: string, before: string, limit: number) =>
      deleted(
        await db
          .deleteFrom("deviceLogs")
          .where(
            "id",
            "in",
            db
              .selectFrom("deviceLogs")
              .select("id")
              .where("deviceId", "=", deviceId)
              .where("id", "<", before)
              .orderBy("id")
              .limit(limit),
          )
          .executeTakeFirst(),
      ),

    /** Like oldestLogKept, for one state entity's history. */
    oldestHistoryKept: async (deviceId: string, entityId: string, keep: number) =>
      (
        await db
          .selectFrom("deviceStateHistory")
          .select("id")
          .where("deviceId", "=", deviceId)
          .where("entityId", "=", entityId)
          .orderBy("id", "desc")
          .offset(Math.max(0, keep - 1))
          .limit(1)
          .executeTakeFirst()
      )?.id,
    deleteHistoryBefore: async (deviceId: string, entityId: string, before: string, limit: number) =>
      deleted(
        await db
          .deleteFrom("deviceStateHistory")
          .where(
            "id",
            "in",
            db
              .selectFrom("deviceStateHistory")
              .select("id")
              .where("deviceId", "=", deviceId)
              .where("entityId", "=", entityId)
              .where("id", "<", before)
              .orderBy("id")
              .limit(limit),
          )
          .executeTakeFirst(),
      ),

    /** Over the server-wide cap: the oldest rows of either table, whatever their project. */
    deleteOldestAnywhere: async (limit: number) => {
      const oldest = async (table: "deviceLogs" | "deviceStateHistory") =>
        (await db.selectFrom(table).select("at").orderBy("at").limit(1).executeTakeFirst())?.at;
      const [log, history] = await Promise.all([oldest("deviceLogs"), oldest("deviceStateHistory")]);
      if (log === undefined && history === undefined) return 0;
      const table =
        history === undefined || (log !== undefined && log <= history) ? "deviceLogs" : "deviceStateHistory";
      return deleted(
        await db
          .deleteFrom(table)
          .where("id", "in", db.selectFrom(table).select("id").orderBy("at").limit(limit))
          .executeTakeFirst(),
      );
    },

    /** Bytes of the database and, for SQLite, of its free pages (inside the file, reusable). */
    size: async (): Promise<{ bytes: number; freeBytes: number }> => {
      if (dialect === "postgres") {
        const row = (
          await sql<{ bytes: number | string }>`select pg_database_size(current_database()) as bytes`.execute(
            db,
          )
        ).rows[0];
        return { bytes: Number(row?.bytes ?? 0), freeBytes: 0 };
      }
      const pragma = async (name: string) =>
        Number(Object.values((await sql.raw(`PRAGMA ${name}`).execute(db)).rows[0] ?? { n: 0 })[0]);
      const [pages, free, pageSize] = [
        await pragma("page_count"),
        await pragma("freelist_count"),
        await pragma("page_size"),
      ];
      return { bytes: pages * pageSize, freeBytes: free * pageSize };
    },
  };
}
export type RetentionRepository = ReturnType<typeof retentionRepository>;
