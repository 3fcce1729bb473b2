import { type Kysely, type Selectable, sql } from "kysely";
import { databaseNow } from "../db/now.ts";
import type { DB } from "../db/schema.ts";
import type { AlertDeliveriesTable, AlertRulesTable, AlertWebhooksTable } from "../db/schema-alerts.ts";
import { type Viewer, visibleProjectIds } from "./viewer.ts";

export type AlertRuleRow = Selectable<AlertRulesTable>;
export type WebhookRow = Selectable<AlertWebhooksTable>;
export type DeliveryRow = Selectable<AlertDeliveriesTable>;

const countOf = async (query: Promise<{ n: unknown }>) => Number((await query).n);

const countInProject = (db: Kysely<DB>, table: "alertRules" | "alertWebhooks", projectId: string) =>
  countOf(
    db
      .selectFrom(table)
      .where("projectId", "=", projectId)
      .select((eb) => eb.fn.countAll().as("n"))
      .executeTakeFirstOrThrow(),
  );

/** Rules, webhooks, the delivery queue/log and open episodes. Reads for users filter by the viewer. */
export function alertsRepository(db: Kysely<DB>) {
  return {
    listRules: (viewer: Viewer, projectId: string) =>
      db
        .selectFrom("alertRules")
        .selectAll()
        .where("projectId", "=", projectId)
        .where("projectId", "in", visibleProjectIds(db, viewer))
        .orderBy("createdAt")
        .orderBy("id")
        .execute(),
    /** For the monitor: every rule of a project. */
    rulesOf: (projectId: string) =>
      db.selectFrom("alertRules").selectAll().where("projectId", "=", projectId).execute(),
    countRules: (projectId: string) => countInProject(db, "alertRules", projectId),
    insertRule: async (row: AlertRuleRow) => {
      await db.insertInto("alertRules").values(row).execute();
    },
    updateRule: async (
      viewer: Viewer,
      projectId: string,
      id: string,
      fields: Pick<AlertRuleRow, "kind" | "minutes" | "count" | "windowMinutes">,
    ) => {
      await db
        .updateTable("alertRules")
        .set(fields)
        .where("id", "=", id)
        .where("projectId", "=", projectId)
        .where("projectId", "in", visibleProjectIds(db, viewer))
        .execute();
      return db
        .selectFrom("alertRules")
        .selectAll()
        .where("id", "=", id)
        .where("projectId", "=", projectId)
        .where("projectId", "in", visibleProjectIds(db, viewer))
        .executeTakeFirst();
    },
    deleteRule: async (viewer: Viewer, projectId: string, id: string) =>
      Number(
        (
          await db
            .deleteFrom("alertRules")
            .where("id", "=", id)
            .where("projectId", "=", projectId)
            .where("projectId", "in", visibleProjectIds(db, viewer))
            .executeTakeFirst()
        ).numDeletedRows,
      ) > 0,

    listWebhooks: (viewer: Viewer, projectId: string) =>
      db
        .selectFrom("alertWebhooks")
        .selectAll()
        .where("projectId", "=", projectId)
        .where("projectId", "in", visibleProjectIds(db, viewer))
        .orderBy("createdAt")
        .orderBy("id")
        .execute(),
    findWebhook: (viewer: Viewer, projectId: string, id: string) =>
      db
        .selectFrom("alertWebhooks")
        .selectAll()
        .where("id", "=", id)
        .where("projectId", "=", projectId)
        .where("projectId", "in", visibleProjectIds(db, viewer))
        .executeTakeFirst(),
    /** For the delivery loop. */
    webhookById: (id: string) =>
      db.selectFrom("alertWebhooks").selectAll().where("id", "=", id).executeTakeFirst(),
    webhooksOf: (projectId: string) =>
      db.selectFrom("alertWebhooks").selectAll().where("projectId", "=", projectId).execute(),
    countWebhooks: (projectId: string) => countInProject(db, "alertWebhooks", projectId),
    insertWebhook: async (row: WebhookRow) => {
      await db.insertInto("alertWebhooks").values(row).execute();
    },
    deleteWebhook: async (viewer: Viewer, projectId: string, id: string) =>
      db.transaction().execute(async (tx) => {
        const visible = await tx
          .selectFrom("alertWebhooks")
          .select("id")
          .where("id", "=", id)
          .where("projectId", "=", projectId)
          .where("projectId", "in", visibleProjectIds(tx, viewer))
          .executeTakeFirst();
        if (!visible) return false;
        await tx.deleteFrom("alertDeliveries").where("webhookId", "=", id).execute();
        await tx.deleteFrom("alertWebhooks").where("id", "=", id).execute();
        return true;
      }),

    insertDelivery: async (row: DeliveryRow) => {
      await db.insertInto("alertDeliveries").values(row).execute();
    },
    delivery: (id: string) =>
      db.selectFrom("alertDeliveries").selectAll().where("id", "=", id).executeTakeFirst(),
    listDeliveries: (viewer: Viewer, projectId: string, limit: number, webhookId?: string) => {
      let query = db
        .selectFrom("alertDeliveries")
        .selectAll()
        .where("projectId", "=", projectId)
        .where("projectId", "in", visibleProjectIds(db, viewer));
      if (webhookId) query = query.where("webhookId", "=", webhookId);
      return query.orderBy("id", "desc").limit(limit).execute();
    },
    /** Pending deliveries whose next attempt is due, oldest first. */
    due: (now: number, limit: number) =>
      db
        .selectFrom("alertDeliveries")
        .selectAll()
        .where("status", "=", "pending")
        .where("nextAttemptAt", "<=", now)
        .orderBy("nextAttemptAt")
        .limit(limit)
        .execute(),
    /**
     * Claims a pending delivery for `holdMs` (its next attempt moves that far ahead) if its next
     * attempt is still `expected` (compare and set) and, unless `force`, due, both by the database's
     * clock (the instances' clocks differ). Returns the claim's end for the one caller that claimed
     * it (the instance of a cluster that attempts it), null for the others.
     */
    claimDelivery: async (id: string, expected: number | null, holdMs: number, force: boolean) => {
      const now = databaseNow(db);
      let claim = db
        .updateTable("alertDeliveries")
        .set({ nextAttemptAt: sql<number>`${now} + ${holdMs}` })
        .where("id", "=", id)
        .where("status", "=", "pending")
        .where("nextAttemptAt", expected === null ? "is" : "=", expected);
      if (!force)
        claim = claim.where((eb) => eb.or([eb("nextAttemptAt", "is", null), eb("nextAttemptAt", "<=", now)]));
      const row = await claim.returning("nextAttemptAt").executeTakeFirst();
      return row?.nextAttemptAt ?? null;
    },
    /** Gives a claim back (an attempt cut short): the next attempt is `back` again, if still claimed. */
    releaseDelivery: async (id: string, claimedUntil: number, back: number | null) => {
      await db
        .updateTable("alertDeliveries")
        .set({ nextAttemptAt: back })
        .where("id", "=", id)
        .where("status", "=", "pending")
        .where("nextAttemptAt", "=", claimedUntil)
        .execute();
    },
    recordAttempt: async (
      id: string,
      change: { status: DeliveryRow["status"]; attempts: string; nextAttemptAt: number | null },
    ) => {
      await db.updateTable("alertDeliveries").set(change).where("id", "=", id).execute();
    },
    /**
     * Keeps the newest `keep` finished (delivered or failed) deliveries of the project; pending ones
     * are not counted nor removed, but beyond the newest `pendingKept` the oldest are marked failed.
     */
    pruneDeliveries: async (projectId: string, keep: number, pendingKept: number) => {
      const oldestKept = (statuses: DeliveryRow["status"][], offset: number) =>
        db
          .selectFrom("alertDeliveries")
          .select("id")
          .where("projectId", "=", projectId)
          .where("status", "in", statuses)
          .orderBy("id", "desc")
          .offset(offset)
          .limit(1)
          .executeTakeFirst();
      const pendingCutoff = await oldestKept(["pending"], pendingKept);
      if (pendingCutoff) {
        await db
          .updateTable("alertDeliveries")
          .set({ status: "failed", nextAttemptAt: null })
          .where("projectId", "=", projectId)
          .where("status", "=", "pending")
          .where("id", "<=", pendingCutoff.id)
          .execute();
      }
      const cutoff = await oldestKept(["delivered", "failed"], keep);
      if (!cutoff) return;
      await db
        .deleteFrom("alertDeliveries")
        .where("projectId", "=", projectId)
        .where("status", "in", ["delivered", "failed"])
        .where("id", "<=", cutoff.id)
        .execute();
    },

    /** At boot: devices last seen before the restart, in projects with an offline rule. */
    offlineWatched: () =>
      db
        .selectFrom("devices")
        .select(["id", "projectId"])
        .where("status", "=", "offline")
        .where("lastSeenAt", "is not", null)
        .where(
          "projectId",
          "in",
          db.selectFrom("alertRules").select("projectId").where("kind", "=", "device_offline"),
        )
        .execute(),
    /** Every open episode, with its rule's kind and project. */
    openEpisodes: () =>
      db
        .selectFrom("alertEpisodes")
        .leftJoin("alertRules", "alertRules.id", "alertEpisodes.ruleId")
        .select([
          "alertEpisodes.ruleId",
          "alertEpisodes.subject",
          "alertEpisodes.openedAt",
          "alertRules.kind",
          "alertRules.projectId",
        ])
        .execute(),
    /** False when the episode was already open (its alert was sent). */
    openEpisode: async (ruleId: string, subject: string, openedAt: number) => {
      const result = await db
        .insertInto("alertEpisodes")
        .values({ ruleId, subject, openedAt })
        .onConflict((oc) => oc.columns(["ruleId", "subject"]).doNothing())
        .executeTakeFirst();
      return Number(result.numInsertedOrUpdatedRows ?? 0n) > 0;
    },
    /** True when an open episode was closed. */
    closeEpisode: async (ruleId: string, subject: string) =>
      Number(
        (
          await db
            .deleteFrom("alertEpisodes")
            .where("ruleId", "=", ruleId)
            .where("subject", "=", subject)
            .executeTakeFirst()
        ).numDeletedRows,
      ) > 0,
  };
}
