import type { Kysely, Selectable } from "kysely";
import type { DB, DeploymentsTable } from "../db/schema.ts";
import { type Viewer, visibleProjectIds } from "./viewer.ts";

export type DeploymentRow = Selectable<DeploymentsTable>;

export function deploymentsRepository(db: Kysely<DB>) {
  return {
    list: (viewer: Viewer, projectId: string) =>
      db
        .selectFrom("deployments")
        .selectAll()
        .where("projectId", "=", projectId)
        .where("projectId", "in", visibleProjectIds(db, viewer))
        .orderBy("version", "desc")
        .execute(),
    find: (viewer: Viewer, projectId: string, id: string) =>
      db
        .selectFrom("deployments")
        .selectAll()
        .where("id", "=", id)
        .where("projectId", "=", projectId)
        .where("projectId", "in", visibleProjectIds(db, viewer))
        .executeTakeFirst(),
    /** For the script host: the live deployment of a project. */
    active: (projectId: string) =>
      db
        .selectFrom("deployments")
        .selectAll()
        .where("projectId", "=", projectId)
        .where("status", "=", "active")
        .executeTakeFirst(),
    /** For the Home Assistant bridge: every project's live deployment. */
    allActive: () => db.selectFrom("deployments").selectAll().where("status", "=", "active").execute(),
    /** Inserts with the next version number of the project (the caller checked visibility). */
    insert: (row: Omit<DeploymentRow, "version">) =>
      db.transaction().execute(async (tx) => {
        const last = await tx
          .selectFrom("deployments")
          .select((eb) => eb.fn.max("version").as("v"))
          .where("projectId", "=", row.projectId)
          .executeTakeFirst();
        const version = Number(last?.v ?? 0) + 1;
        await tx
          .insertInto("deployments")
          .values({ ...row, version })
          .execute();
        return { ...row, version };
      }),
    /** At boot: a deployment still pending from before this process started was cut off by a stop or crash. */
    failInterrupted: async (before: number) => {
      await db
        .updateTable("deployments")
        .set({
          status: "failed",
          error: "the server stopped while this deployment was being checked; deploy it again",
        })
        .where("status", "=", "pending")
        .where("createdAt", "<", before)
        .execute();
    },
    /**
     * Deletes the deployments of a project older than its newest `keep`, except the live one and
     * one still being checked; returns the ids removed.
     */
    prune: (projectId: string, keep: number) =>
      db.transaction().execute(async (tx) => {
        const old = await tx
          .selectFrom("deployments")
          .select(["id", "status"])
          .where("projectId", "=", projectId)
          .orderBy("version", "desc")
          .limit(1_000_000)
          .offset(keep)
          .execute();
        const ids = old.filter((r) => r.status === "inactive" || r.status === "failed").map((r) => r.id);
        if (ids.length > 0) await tx.deleteFrom("deployments").where("id", "in", ids).execute();
        return ids;
      }),
    markFailed: async (id: string, error: string) => {
      await db.updateTable("deployments").set({ status: "failed", error }).where("id", "=", id).execute();
    },
    /** Makes one deployment the live one; the previous live one becomes inactive. */
    activate: (projectId: string, id: string, now: number) =>
      db.transaction().execute(async (tx) => {
        await tx
          .updateTable("deployments")
          .set({ status: "inactive" })
          .where("projectId", "=", projectId)
          .where("status", "=", "active")
          .execute();
        await tx
          .updateTable("deployments")
          .set({ status: "active", activatedAt: now, error: null })
          .where("id", "=", id)
          .where("projectId", "=", projectId)
          .execute();
      }),
  };
}
