import { randomBytes } from "node:crypto";
import {
  type AlertDelivery,
  type AlertEventType,
  type AlertRule,
  alertLimits,
  type CreateAlertRuleBody,
  type CreatedWebhook,
  type Webhook,
} from "@sdk/protocol";
import { AppError } from "../errors.ts";
import type { Clock } from "../lib/clock.ts";
import { newId, newSortableId } from "../lib/ids.ts";
import type { SecretBox } from "../lib/secret-box.ts";
import { checkWebhookUrl, postWebhook, webhookSignature } from "../lib/webhook-post.ts";
import type { PrivateRange } from "../lib/webhook-target.ts";
import type { AlertRuleRow, DeliveryRow, WebhookRow } from "../repositories/alerts.ts";
import type { Repositories } from "../repositories/index.ts";
import { type Principal, viewerOf } from "./auth.ts";
import { projectNotFound } from "./projects.ts";
import { iso } from "./views.ts";

/**
 * Delays before the 2nd, 3rd, … attempt of a delivery (×3 each time): 8 attempts over about
 * 3 hours, then the delivery is `failed`.
 */
const retryDelaysMs = [10, 30, 90, 270, 810, 2_430, 7_290].map((s) => s * 1000);
const attemptTimeoutMs = 10_000;
/** Sees every project: for the monitor, which acts for the server, not for a user. */
const server = { userId: "", isAdmin: true };

export interface Alert {
  projectId: string;
  type: AlertEventType;
  message: string;
  rule?: AlertRuleRow;
  deviceId?: string;
  deployment?: { id: string; version: number };
  details?: Record<string, unknown>;
}

const ruleView = (r: AlertRuleRow): AlertRule => ({
  id: r.id,
  projectId: r.projectId,
  kind: r.kind,
  minutes: r.minutes,
  count: r.count,
  windowMinutes: r.windowMinutes,
  createdAt: iso(r.createdAt),
});
const webhookView = (w: WebhookRow): Webhook => ({
  id: w.id,
  projectId: w.projectId,
  name: w.name,
  url: w.url,
  createdAt: iso(w.createdAt),
});
const deliveryView = (d: DeliveryRow): AlertDelivery => ({
  id: d.id,
  webhookId: d.webhookId,
  type: d.type,
  status: d.status,
  createdAt: iso(d.createdAt),
  nextAttemptAt: d.nextAttemptAt === null ? null : iso(d.nextAttemptAt),
  attempts: (JSON.parse(d.attempts) as { at: number; status: number | null; error: string | null }[]).map(
    (a) => ({ ...a, at: iso(a.at) }),
  ),
  body: JSON.parse(d.body),
});

const ruleFields = (body: CreateAlertRuleBody) => ({
  kind: body.kind,
  minutes: body.kind === "device_offline" ? body.minutes : null,
  count: body.kind === "script_errors" ? body.count : null,
  windowMinutes: body.kind === "script_errors" ? body.windowMinutes : null,
});

/** Alert rules and webhooks of a project, and the signed, retried delivery of its alerts. */
export function alertsService(deps: {
  repos: Pick<Repositories, "projects" | "devices" | "alerts">;
  box: SecretBox;
  clock: Clock;
  allowPrivate: readonly PrivateRange[];
  version: string;
}) {
  const { repos, box, clock, allowPrivate, version } = deps;
  const alerts = repos.alerts;
  const context = (w: { projectId: string; id: string }) => `webhook:${w.projectId}:${w.id}`;
  const inFlight = new Set<string>();
  /** Bumped when a rule is added or removed, so the monitor's cache of rules knows it is stale. */
  let rulesVersion = 0;

  async function visibleProject(principal: Principal, projectId: string) {
    const project = await repos.projects.findVisible(viewerOf(principal), projectId);
    if (!project) throw projectNotFound();
    return project;
  }

  /** One attempt of a pending delivery; records its outcome and schedules the next one. */
  async function attempt(id: string): Promise<void> {
    if (inFlight.has(id)) return;
    inFlight.add(id);
    try {
      const row = await alerts.delivery(id);
      const webhook = row && (await alerts.webhookById(row.webhookId));
      if (!row || !webhook || row.status !== "pending") return;
      const at = clock.now();
      const secret = box.open(webhook.secretEncrypted, context(webhook));
      const outcome = await postWebhook({
        url: webhook.url,
        body: row.body,
        allowed: allowPrivate,
        timeoutMs: attemptTimeoutMs,
        headers: {
          "content-type": "application/json",
          "user-agent": `sdk-webhooks/${version}`,
          "x-sdk-event": row.type,
          "x-sdk-delivery": row.id,
          "x-sdk-timestamp": String(Math.floor(at / 1000)),
          "x-sdk-signature": webhookSignature(secret, row.body),
        },
      });
      const attempts = [...JSON.parse(row.attempts), { at, ...outcome }];
      const delay = retryDelaysMs[attempts.length - 1];
      const delivered = outcome.error === null;
      await alerts.recordAttempt(id, {
        attempts: JSON.stringify(attempts),
        status: delivered ? "delivered" : delay === undefined ? "failed" : "pending",
        nextAttemptAt: delivered || delay === undefined ? null : at + delay,
      });
    } finally {
      inFlight.delete(id);
    }
  }

  async function enqueue(webhook: WebhookRow, type: AlertEventType, body: Record<string, unknown>) {
    const now = clock.now();
    const id = newSortableId("dlv", now);
    await alerts.insertDelivery({
      id,
      projectId: webhook.projectId,
      webhookId: webhook.id,
      type,
      body: JSON.stringify({ id, type, createdAt: iso(now), ...body }),
      status: "pending",
      attempts: "[]",
      nextAttemptAt: now,
      createdAt: now,
    });
    await alerts.pruneDeliveries(webhook.projectId, alertLimits.deliveriesKept);
    return id;
  }

  async function bodyOf(alert: Alert) {
    const project = await repos.projects.findVisible(server, alert.projectId);
    const device = alert.deviceId
      ? await repos.devices.find(server, alert.projectId, alert.deviceId)
      : undefined;
    return {
      message: alert.message,
      project: { id: alert.projectId, name: project?.name ?? null },
      rule: alert.rule ? ruleView(alert.rule) : null,
      device: alert.deviceId ? { id: alert.deviceId, name: device?.name ?? null } : null,
      deployment: alert.deployment ?? null,
      details: alert.details ?? {},
    };
  }

  return {
    async listRules(principal: Principal, projectId: string): Promise<AlertRule[]> {
      await visibleProject(principal, projectId);
      return (await alerts.listRules(viewerOf(principal), projectId)).map(ruleView);
    },

    async createRule(principal: Principal, projectId: string, body: CreateAlertRuleBody): Promise<AlertRule> {
      await visibleProject(principal, projectId);
      if ((await alerts.countRules(projectId)) >= alertLimits.rulesPerProject) {
        throw new AppError(
          "invalid_request",
          `A project can have at most ${alertLimits.rulesPerProject} alert rules`,
        );
      }
      const row: AlertRuleRow = { id: newId("alr"), projectId, ...ruleFields(body), createdAt: clock.now() };
      await alerts.insertRule(row);
      rulesVersion++;
      return ruleView(row);
    },

    async updateRule(
      principal: Principal,
      projectId: string,
      ruleId: string,
      body: CreateAlertRuleBody,
    ): Promise<AlertRule> {
      await visibleProject(principal, projectId);
      const row = await alerts.updateRule(viewerOf(principal), projectId, ruleId, ruleFields(body));
      if (!row) throw new AppError("not_found", "No such alert rule");
      rulesVersion++;
      return ruleView(row);
    },

    async deleteRule(principal: Principal, projectId: string, ruleId: string): Promise<void> {
      await visibleProject(principal, projectId);
      if (!(await alerts.deleteRule(viewerOf(principal), projectId, ruleId))) {
        throw new AppError("not_found", "No such alert rule");
      }
      rulesVersion++;
    },

    async listWebhooks(principal: Principal, projectId: string): Promise<Webhook[]> {
      await visibleProject(principal, projectId);
      return (await alerts.listWebhooks(viewerOf(principal), projectId)).map(webhookView);
    },

    async createWebhook(
      principal: Principal,
      projectId: string,
      body: { url: string; name?: string | undefined },
    ): Promise<CreatedWebhook> {
      await visibleProject(principal, projectId);
      const refused = await checkWebhookUrl(body.url, allowPrivate);
      if (refused) {
        throw new AppError("invalid_request", `Invalid request: url is refused: ${refused}`, {
          fields: [{ path: "url", message: `is refused: ${refused}` }],
        });
      }
      if ((await alerts.countWebhooks(projectId)) >= alertLimits.webhooksPerProject) {
        throw new AppError(
          "invalid_request",
          `A project can have at most ${alertLimits.webhooksPerProject} webhooks`,
        );
      }
      const secret = `whsec_${randomBytes(32).toString("base64url")}`;
      const row: WebhookRow = {
        id: newId("whk"),
        projectId,
        name: body.name ?? new URL(body.url).host,
        url: body.url,
        secretEncrypted: "",
        createdAt: clock.now(),
      };
      row.secretEncrypted = box.seal(secret, context(row));
      await alerts.insertWebhook(row);
      return { ...webhookView(row), secret };
    },

    async deleteWebhook(principal: Principal, projectId: string, webhookId: string): Promise<void> {
      await visibleProject(principal, projectId);
      if (!(await alerts.deleteWebhook(viewerOf(principal), projectId, webhookId))) {
        throw new AppError("not_found", "No such webhook");
      }
    },

    /** Sends a `test` alert now and answers the delivery after its first attempt. */
    async testWebhook(principal: Principal, projectId: string, webhookId: string): Promise<AlertDelivery> {
      const project = await visibleProject(principal, projectId);
      const webhook = await alerts.findWebhook(viewerOf(principal), projectId, webhookId);
      if (!webhook) throw new AppError("not_found", "No such webhook");
      const id = await enqueue(webhook, "test", {
        message: `A test alert for project ${project.name}`,
        project: { id: projectId, name: project.name },
        rule: null,
        device: null,
        deployment: null,
        details: {},
      });
      await attempt(id);
      const row = await alerts.delivery(id);
      if (!row) throw new AppError("not_found", "The delivery was removed (its webhook was deleted)");
      return deliveryView(row);
    },

    async listDeliveries(
      principal: Principal,
      projectId: string,
      query: { limit: number; webhookId?: string | undefined },
    ): Promise<AlertDelivery[]> {
      await visibleProject(principal, projectId);
      return (await alerts.listDeliveries(viewerOf(principal), projectId, query.limit, query.webhookId)).map(
        deliveryView,
      );
    },

    /** For the monitor: the rules of a project. */
    rulesOf: (projectId: string) => alerts.rulesOf(projectId),
    rulesVersion: () => rulesVersion,
    offlineWatched: () => alerts.offlineWatched(),

    /** Queues the alert for every webhook of its project; the returned promise settles once queued. */
    async raise(alert: Alert): Promise<string[]> {
      const webhooks = await alerts.webhooksOf(alert.projectId);
      if (webhooks.length === 0) return [];
      const body = await bodyOf(alert);
      const ids: string[] = [];
      for (const webhook of webhooks) ids.push(await enqueue(webhook, alert.type, body));
      return ids;
    },

    /** Attempts these deliveries now (in the background of the caller). */
    attempt,

    /** Attempts every delivery whose next attempt is due. */
    async deliverDue(): Promise<void> {
      const due = await alerts.due(clock.now(), 50);
      await Promise.all(due.map((d) => attempt(d.id)));
    },

    openEpisodes: () => alerts.openEpisodes(),
    openEpisode: (ruleId: string, subject: string) => alerts.openEpisode(ruleId, subject, clock.now()),
    closeEpisode: (ruleId: string, subject: string) => alerts.closeEpisode(ruleId, subject),
  };
}
export type AlertsService = ReturnType<typeof alertsService>;
