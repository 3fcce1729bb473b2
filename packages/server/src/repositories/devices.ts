import type { ConnectionState } from "@sdk/protocol";
import type { Kysely, Selectable } from "kysely";
import type { DB, DevicesTable } from "../db/schema.ts";
import type { WriteBatcher } from "../db/write-batcher.ts";
import { type Viewer, visibleProjectIds } from "./viewer.ts";

export type DeviceRow = Omit<Selectable<DevicesTable>, "secretHash">;

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

export function devicesRepository(db: Kysely<DB>, batcher: WriteBatcher) {
  const scoped = (viewer: Viewer, projectId: string) =>
    db
      .selectFrom("devices")
      .select(columns)
      .where("projectId", "=", projectId)
      .where("projectId", "in", visibleProjectIds(db, viewer));

  // The device socket's queries, built and compiled once: after a restart thousands of boards
  // authenticate and say hello within a second or two, and building each query again cost more
  // than running it. Parameters are in placeholder order.
  const authQuery = db
    .selectFrom("devices")
    .select(["id", "projectId", "board", "secretHash"])
    .where("id", "=", "")
    .compile();
  const presenceQuery = db
    .updateTable("devices")
    .set({ status: "online", lastSeenAt: 0 })
    .where("id", "=", "")
    .compile();
  const presenceFirmwareQuery = db
    .updateTable("devices")
    .set({ status: "online", lastSeenAt: 0, firmwareVersion: "" })
    .where("id", "=", "")
    .compile();

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
    insert: async (row: Omit<Selectable<DevicesTable>, "status">) => {
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
    insertMany: (rows: (Omit<Selectable<DevicesTable>, "status"> & { tags: string[] })[]) =>
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
    findForAuth: async (id: string) =>
      (await db.executeQuery({ ...authQuery, parameters: [id] } as typeof authQuery)).rows[0],
    /** For the device socket: presence changes reported by the authenticated connection. */
    /** Group-committed: after a restart thousands of boards say hello at once. */
    setPresence: (
      id: string,
      fields: { status: ConnectionState; lastSeenAt: number; firmwareVersion?: string },
    ) =>
      batcher.run(async (tx) => {
        await tx.executeQuery(
          fields.firmwareVersion === undefined
            ? { ...presenceQuery, parameters: [fields.status, fields.lastSeenAt, id] }
            : {
                ...presenceFirmwareQuery,
                parameters: [fields.status, fields.lastSeenAt, fields.firmwareVersion, id],
              },
        );
      }),
    /**
     * At boot no device is connected yet. Returns the devices that were still online: the server
     * stopped without closing their connections (a crash, a kill, a power cut).
     */
    markAllOffline: async () => {
      const online = await db
        .selectFrom("devices")
        .select(["id", "projectId", "lastSeenAt"])
        .where("status", "=", "online")
        .execute();
      if (online.length > 0)
        await db.updateTable("devices").set({ status: "offline" }).where("status", "=", "online").execute();
      return online;
    },
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
