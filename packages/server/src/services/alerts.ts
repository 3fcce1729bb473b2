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
import { checkWebhookUrl, type PostOutcome, postWebhook, webhookSignature } from "../lib/webhook-post.ts";
import type { PrivateRange } from "../lib/webhook-target.ts";
import type { AlertRuleRow, DeliveryRow, WebhookRow } from "../repositories/alerts.ts";
import type { Repositories } from "../repositories/index.ts";
import { type Principal, viewerOf } from "./auth.ts";
import { projectNotFound } from "./projects.ts";
import { iso } from "./views.ts";

/**
 * Delays before the 2nd, 3rd, … attempt of a delivery (×3 each time, each ±20 % at random so
 * deliveries that failed together do not retry together): 8 attempts over about 3 hours, then
 * the delivery is `failed`.
 */
const retryDelaysMs = [10, 30, 90, 270, 810, 2_430, 7_290].map((s) => s * 1000);
const jittered = (delayMs: number) => Math.round(delayMs * (0.8 + Math.random() * 0.4));
/** A whole attempt (connect, send, status line) ends after this, however the receiver trickles. */
const attemptDeadlineMs = 10_000;
/** In a cluster, a claimed delivery is another instance's for its deadline and this much more. */
const claimMarginMs = 5_000;
/** Attempts running at once, server-wide and per webhook: a slow receiver holds only its own share. */
const concurrentAttempts = 16;
const concurrentPerWebhook = 2;
/** How long stop() lets running attempts finish before it aborts them (they stay pending). */
const stopGraceMs = 2_000;
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

/** What a webhook's stored secret is bound to (SecretBox associated data). */
export const webhookSecretContext = (w: { projectId: string; id: string }) =>
  `webhook:${w.projectId}:${w.id}`;

/** Alert rules and webhooks of a project, and the signed, retried delivery of its alerts. */
export function alertsService(deps: {
  repos: Pick<Repositories, "projects" | "devices" | "alerts">;
  box: SecretBox;
  clock: Clock;
  allowPrivate: readonly PrivateRange[];
  version: string;
  /**
   * Other instances (a cluster) attempt the same queue: each attempt first claims its delivery in
   * the database, so a delivery is attempted by one instance at a time.
   */
  shared?: boolean;
}) {
  const { repos, box, clock, allowPrivate, version } = deps;
  const alerts = repos.alerts;
  /** The running attempt of each delivery: a second caller awaits it rather than starting another. */
  const inFlight = new Map<string, Promise<void>>();
  const webhookLoad = new Map<string, number>();
  const shutdown = new AbortController();
  let stopping = false;
  /** Bumped when a rule is added or removed, so the monitor's cache of rules knows it is stale. */
  let rulesVersion = 0;

  async function visibleProject(principal: Principal, projectId: string) {
    const project = await repos.projects.findVisible(viewerOf(principal), projectId);
    if (!project) throw projectNotFound();
    return project;
  }

  /** One attempt of a pending delivery; records its outcome and schedules the next one. */
  async function attemptNow(id: string, force: boolean): Promise<void> {
    // Read again now that this is the only attempt of the delivery: a caller's copy may be from
    // before another attempt finished (then it is no longer pending, or not due yet).
    const row = await alerts.delivery(id);
    const at = clock.now();
    if (row?.status !== "pending" || (!force && (row.nextAttemptAt ?? 0) > at)) return;
    // Claimed until the attempt must be over: an instance that dies meanwhile leaves it due then.
    // The claim's times are the database's: another instance's clock may be ahead of this one's.
    const claimedUntil = deps.shared
      ? await alerts.claimDelivery(id, row.nextAttemptAt, attemptDeadlineMs + claimMarginMs, force)
      : null;
    if (deps.shared && claimedUntil === null) return;
    let outcome: PostOutcome;
    try {
      const webhook = await alerts.webhookById(row.webhookId);
      if (!webhook) return;
      const secret = box.open(webhook.secretEncrypted, webhookSecretContext(webhook));
      const timestamp = String(Math.floor(at / 1000));
      outcome = await postWebhook({
        url: webhook.url,
        body: row.body,
        allowed: allowPrivate,
        deadlineMs: attemptDeadlineMs,
        signal: shutdown.signal,
        headers: {
          "content-type": "application/json",
          "user-agent": `sdk-webhooks/${version}`,
          "x-sdk-event": row.type,
          "x-sdk-delivery": row.id,
          "x-sdk-timestamp": timestamp,
          "x-sdk-signature": webhookSignature(secret, timestamp, row.body),
        },
      });
    } catch (error) {
      // Recorded like any failed attempt, so it is retried on the schedule, not on every tick.
      outcome = { status: null, error: `the attempt failed: ${(error as Error).message}` };
    }
    // Cut short by shutdown: left pending as it was, so the next start attempts it again.
    if (shutdown.signal.aborted) {
      if (claimedUntil !== null) await alerts.releaseDelivery(id, claimedUntil, row.nextAttemptAt);
      return;
    }
    const attempts = [...JSON.parse(row.attempts), { at, ...outcome }];
    const delay = retryDelaysMs[attempts.length - 1];
    const delivered = outcome.error === null;
    await alerts.recordAttempt(row.id, {
      attempts: JSON.stringify(attempts),
      status: delivered ? "delivered" : delay === undefined ? "failed" : "pending",
      nextAttemptAt: delivered || delay === undefined ? null : at + jittered(delay),
    });
  }

  /**
   * Starts an attempt unless one of this delivery runs already (then answers that one), or the
   * caps are reached (then answers `undefined`: it stays due, and a later pass starts it).
   */
  function launch(row: DeliveryRow, force: boolean): Promise<void> | undefined {
    const running = inFlight.get(row.id);
    if (running) return running;
    if (shutdown.signal.aborted || stopping) return undefined;
    const perWebhook = webhookLoad.get(row.webhookId) ?? 0;
    if (!force && (inFlight.size >= concurrentAttempts || perWebhook >= concurrentPerWebhook))
      return undefined;
    webhookLoad.set(row.webhookId, perWebhook + 1);
    const work = attemptNow(row.id, force).finally(() => {
      inFlight.delete(row.id);
      const left = (webhookLoad.get(row.webhookId) ?? 1) - 1;
      if (left > 0) webhookLoad.set(row.webhookId, left);
      else webhookLoad.delete(row.webhookId);
    });
    inFlight.set(row.id, work);
    return work;
  }

  /** Attempts a pending delivery now (within the caps); settles when that attempt is recorded. */
  async function attempt(id: string, force = false): Promise<void> {
    const running = inFlight.get(id);
    if (running) return running;
    const row = await alerts.delivery(id);
    if (row?.status !== "pending") return;
    await launch(row, force);
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
    await alerts.pruneDeliveries(webhook.projectId, alertLimits.deliveriesKept, alertLimits.pendingKept);
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
      row.secretEncrypted = box.seal(secret, webhookSecretContext(row));
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
      await attempt(id, true);
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

    /** Attempts this delivery now, within the caps (in the background of the caller). */
    attempt: (id: string) => attempt(id),

    /**
     * Starts the attempts of the deliveries now due, within the caps, and returns without waiting
     * for them: each runs on its own, so a slow receiver holds up no other delivery.
     */
    async deliverDue(onError: (error: unknown) => void): Promise<void> {
      const free = concurrentAttempts - inFlight.size;
      if (free <= 0) return;
      for (const row of await alerts.due(clock.now(), free + inFlight.size)) {
        if (inFlight.size >= concurrentAttempts) break;
        launch(row, false)?.catch(onError);
      }
    },

    /** Lets running attempts finish for a bounded time, then aborts the rest (they stay pending). */
    async stop(): Promise<void> {
      stopping = true;
      let timer: NodeJS.Timeout | undefined;
      const grace = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, stopGraceMs);
      });
      await Promise.race([Promise.allSettled([...inFlight.values()]), grace]);
      clearTimeout(timer);
      shutdown.abort();
      await Promise.allSettled([...inFlight.values()]);
    },

    /** Other instances (a cluster) share the queue and the rules: the monitor takes it from here. */
    shared: deps.shared ?? false,
    openEpisodes: () => alerts.openEpisodes(),
    openEpisode: (ruleId: string, subject: string) => alerts.openEpisode(ruleId, subject, clock.now()),
    closeEpisode: (ruleId: string, subject: string) => alerts.closeEpisode(ruleId, subject),
  };
}
export type AlertsService = ReturnType<typeof alertsService>;
