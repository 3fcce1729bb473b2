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
 * Retention: each project's rules and the sweeper's deletes. Every delete removes at most `limit`
 * rows, so one statement never holds the database for long.
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

    deleteLogsOlderThan: async (projectId: string, cutoff: number, limit: number) =>
      deleted(
        await db
          .deleteFrom("deviceLogs")
          .where(
            "id",
            "in",
            db
              .selectFrom("deviceLogs")
              .innerJoin("devices", "devices.id", "deviceLogs.deviceId")
              .select("deviceLogs.id")
              .where("devices.projectId", "=", projectId)
              .where("deviceLogs.at", "<", cutoff)
              .limit(limit),
          )
          .executeTakeFirst(),
      ),
    /** The project's devices with more than `keep` log entries, and how many they have. */
    devicesOverLogCount: async (projectId: string, keep: number) =>
      (
        await db
          .selectFrom("deviceLogs")
          .innerJoin("devices", "devices.id", "deviceLogs.deviceId")
          .select(["deviceLogs.deviceId", (eb) => eb.fn.countAll().as("n")])
          .where("devices.projectId", "=", projectId)
          .groupBy("deviceLogs.deviceId")
          .having((eb) => eb.fn.countAll(), ">", keep)
          .execute()
      ).map((r) => ({ deviceId: r.deviceId, count: Number(r.n) })),
    deleteOldestLogs: async (deviceId: string, limit: number) =>
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
              .orderBy("id")
              .limit(limit),
          )
          .executeTakeFirst(),
      ),

    deleteHistoryOlderThan: async (projectId: string, cutoff: number, limit: number) =>
      deleted(
        await db
          .deleteFrom("deviceStateHistory")
          .where(
            "id",
            "in",
            db
              .selectFrom("deviceStateHistory")
              .innerJoin("devices", "devices.id", "deviceStateHistory.deviceId")
              .select("deviceStateHistory.id")
              .where("devices.projectId", "=", projectId)
              .where("deviceStateHistory.at", "<", cutoff)
              .limit(limit),
          )
          .executeTakeFirst(),
      ),
    /** The project's state entities with more than `keep` history values, and how many they have. */
    entitiesOverHistoryCount: async (projectId: string, keep: number) =>
      (
        await db
          .selectFrom("deviceStateHistory")
          .innerJoin("devices", "devices.id", "deviceStateHistory.deviceId")
          .select([
            "deviceStateHistory.deviceId",
            "deviceStateHistory.entityId",
            (eb) => eb.fn.countAll().as("n"),
          ])
          .where("devices.projectId", "=", projectId)
          .groupBy(["deviceStateHistory.deviceId", "deviceStateHistory.entityId"])
          .having((eb) => eb.fn.countAll(), ">", keep)
          .execute()
      ).map((r) => ({ deviceId: r.deviceId, entityId: r.entityId, count: Number(r.n) })),
    deleteOldestHistory: async (deviceId: string, entityId: string, limit: number) =>
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
