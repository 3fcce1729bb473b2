import type { Kysely, Selectable } from "kysely";
import type { DB, DeploymentsTable } from "../db/schema.ts";
import { type Viewer, visibleProjectIds } from "./viewer.ts";

export type DeploymentRow = Selectable<DeploymentsTable>;

/** What a deployment runs: its bundle and the source map built with it. */
export interface DeploymentBundle {
  bundle: string;
  sourceMap?: string;
}

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
    /**
     * Inserts with the next version number of the project, and its bundle, in one transaction (the
     * caller checked visibility): every instance reads the bundle from the database.
     */
    insert: (
      row: Omit<DeploymentRow, "version" | "rollout"> & { rollout?: string | null },
      files: DeploymentBundle,
    ) =>
      db.transaction().execute(async (tx) => {
        const last = await tx
          .selectFrom("deployments")
          .select((eb) => eb.fn.max("version").as("v"))
          .where("projectId", "=", row.projectId)
          .executeTakeFirst();
        const version = Number(last?.v ?? 0) + 1;
        const inserted = { ...row, rollout: row.rollout ?? null, version };
        await tx.insertInto("deployments").values(inserted).execute();
        await tx
          .insertInto("deploymentBundles")
          .values({ deploymentId: row.id, bundle: files.bundle, sourceMap: files.sourceMap ?? null })
          .execute();
        return inserted;
      }),
    /** The bundle and source map of a deployment (the caller checked visibility); undefined if none is stored. */
    bundle: async (id: string): Promise<DeploymentBundle | undefined> => {
      const row = await db
        .selectFrom("deploymentBundles")
        .select(["bundle", "sourceMap"])
        .where("deploymentId", "=", id)
        .executeTakeFirst();
      return row && { bundle: row.bundle, ...(row.sourceMap === null ? {} : { sourceMap: row.sourceMap }) };
    },
    /** At boot: the deployments whose bundle is not in the database yet (stored on disk before 0009). */
    withoutBundle: () =>
      db
        .selectFrom("deployments")
        .select(["deployments.id", "deployments.projectId"])
        .where((eb) =>
          eb.not(
            eb.exists(
              eb
                .selectFrom("deploymentBundles")
                .select("deploymentBundles.deploymentId")
                .whereRef("deploymentBundles.deploymentId", "=", "deployments.id"),
            ),
          ),
        )
        .orderBy("deployments.id")
        .execute(),
    /** Stores a bundle read from disk; a bundle already stored (another instance's import) is kept. */
    importBundle: async (id: string, files: DeploymentBundle) => {
      await db
        .insertInto("deploymentBundles")
        .values({ deploymentId: id, bundle: files.bundle, sourceMap: files.sourceMap ?? null })
        .onConflict((oc) => oc.column("deploymentId").doNothing())
        .execute();
    },
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
     * Deletes the deployments of a project older than its newest `keep`, except the live one, one
     * still being checked, and `except` (a rollout's); returns the ids removed.
     */
    prune: (projectId: string, keep: number, except: string[] = []) =>
      db.transaction().execute(async (tx) => {
        const old = await tx
          .selectFrom("deployments")
          .select(["id", "status"])
          .where("projectId", "=", projectId)
          .orderBy("version", "desc")
          .limit(1_000_000)
          .offset(keep)
          .execute();
        const ids = old
          .filter((r) => r.status === "inactive" || r.status === "failed" || r.status === "rolled_back")
          .filter((r) => !except.includes(r.id))
          .map((r) => r.id);
        if (ids.length > 0) await tx.deleteFrom("deployments").where("id", "in", ids).execute();
        return ids;
      }),
    /** For the rollouts service at boot: canaries and watches without a decision (cut off by a restart). */
    undecided: () =>
      db
        .selectFrom("deployments")
        .selectAll()
        .where((eb) => eb.or([eb("status", "=", "canary"), eb("rollout", "like", '%"decision":null%')]))
        .execute(),
    /** A checked (pending or earlier) deployment runs as a canary: its rollout starts. */
    markCanary: async (id: string, rollout: string) => {
      await db
        .updateTable("deployments")
        .set({ status: "canary", error: null, rollout })
        .where("id", "=", id)
        .execute();
    },
    /** The rollout's figures or decision changed. */
    setRollout: async (id: string, rollout: string) => {
      await db.updateTable("deployments").set({ rollout }).where("id", "=", id).execute();
    },
    /**
     * Rolls a deployment back: it becomes `rolled_back` with the reason; `previousId` (a plain deploy's
     * predecessor) becomes the live one again, keeping when it first went live.
     */
    markRolledBack: (
      projectId: string,
      id: string,
      reason: string,
      rollout: string,
      previousId: string | null,
    ) =>
      db.transaction().execute(async (tx) => {
        await tx
          .updateTable("deployments")
          .set({ status: "rolled_back", error: reason, rollout })
          .where("id", "=", id)
          .where("projectId", "=", projectId)
          .execute();
        if (previousId === null) return;
        await tx
          .updateTable("deployments")
          .set({ status: "active" })
          .where("id", "=", previousId)
          .where("projectId", "=", projectId)
          .execute();
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
