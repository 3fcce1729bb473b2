import { z } from "zod";
import { Name, Timestamp } from "./schema-parts.ts";

// Alert rules, webhooks and their delivery log (`/v1/projects/:projectId/alerts/...`).

/**
 * Per project: how many rules and webhooks, how many finished (delivered or failed) deliveries the
 * log keeps (newest), and how many may be pending at once (beyond that the oldest are given up: `failed`).
 */
export const alertLimits = {
  rulesPerProject: 50,
  webhooksPerProject: 10,
  deliveriesKept: 500,
  pendingKept: 1000,
  urlMaxLength: 2048,
} as const;

export const AlertRuleKind = z.enum(["device_offline", "deployment", "script_errors"]);
export type AlertRuleKind = z.infer<typeof AlertRuleKind>;

const Minutes = z.number().int().min(1).max(10_080);

export const CreateAlertRuleBody = z.discriminatedUnion("kind", [
  z.object({
    kind: z.literal("device_offline"),
    minutes: Minutes.describe("Alert when a device has been offline this many minutes in a row."),
  }),
  z.object({
    kind: z.literal("deployment"),
  }),
  z.object({
    kind: z.literal("script_errors"),
    count: z
      .number()
      .int()
      .min(1)
      .max(100_000)
      .describe("Alert when a device's script fails (uncaught error or timeout) this many times…"),
    windowMinutes: Minutes.describe("…within this many minutes."),
  }),
]);
export type CreateAlertRuleBody = z.infer<typeof CreateAlertRuleBody>;

export const AlertRule = z.object({
  id: z.string(),
  projectId: z.string(),
  kind: AlertRuleKind,
  minutes: z.number().nullable().describe("device_offline: minutes offline before the alert."),
  count: z.number().nullable().describe("script_errors: failures within the window."),
  windowMinutes: z.number().nullable().describe("script_errors: the window."),
  createdAt: Timestamp,
});
export type AlertRule = z.infer<typeof AlertRule>;

export const CreateWebhookBody = z.object({
  url: z
    .string()
    .max(alertLimits.urlMaxLength)
    .url()
    .refine((u) => /^https?:\/\//i.test(u), "must be an http:// or https:// URL"),
  name: Name().optional(),
});

export const Webhook = z.object({
  id: z.string(),
  projectId: z.string(),
  name: z.string(),
  url: z.string(),
  createdAt: Timestamp,
});
export type Webhook = z.infer<typeof Webhook>;

export const CreatedWebhook = Webhook.extend({
  secret: z
    .string()
    .describe("The signing secret (HMAC-SHA256 key of X-Sdk-Signature). It is shown only once."),
});
export type CreatedWebhook = z.infer<typeof CreatedWebhook>;

/** What an alert is about: the `type` of a webhook body. */
export const AlertEventType = z.enum([
  "device.offline",
  "device.online",
  "deployment.failed",
  "deployment.rolled_back",
  "script.errors",
  "test",
]);
export type AlertEventType = z.infer<typeof AlertEventType>;

export const DeliveryAttempt = z.object({
  at: Timestamp,
  /** The receiver's HTTP status; `null` when no answer came (refused, timed out, unreachable). */
  status: z.number().nullable(),
  error: z.string().nullable(),
});

export const AlertDelivery = z.object({
  id: z.string(),
  webhookId: z.string(),
  type: AlertEventType,
  status: z
    .enum(["pending", "delivered", "failed"])
    .describe("`pending` while retries remain, `failed` once they are used up."),
  createdAt: Timestamp,
  nextAttemptAt: Timestamp.nullable(),
  attempts: z.array(DeliveryAttempt),
  /** The JSON body sent (the same on every attempt). */
  body: z.unknown(),
});
export type AlertDelivery = z.infer<typeof AlertDelivery>;

export const DeliveriesQuery = z.object({
  limit: z.coerce.number().int().min(1).max(alertLimits.deliveriesKept).default(50),
  webhookId: z.string().max(64).optional().describe("Only this webhook's deliveries."),
});

const ok = z.object({ ok: z.literal(true) });
const base = "/v1/projects/:projectId/alerts";

/** The alert endpoints, merged into `endpoints` (endpoints.ts). */
export const alertEndpoints = {
  listAlertRules: {
    method: "GET",
    path: `${base}/rules`,
    summary: "The project's alert rules",
    access: "user",
    result: z.array(AlertRule),
  },
  createAlertRule: {
    method: "POST",
    path: `${base}/rules`,
    summary:
      "Add an alert rule: `device_offline` (offline N minutes, then back online), `deployment` (failed or rolled back) or `script_errors` (script failures above a rate)",
    access: "user",
    body: CreateAlertRuleBody,
    result: AlertRule,
    status: 201,
  },
  updateAlertRule: {
    method: "PUT",
    path: `${base}/rules/:ruleId`,
    summary: "Change an alert rule (the whole rule, as when adding it); an open episode stays open",
    access: "user",
    body: CreateAlertRuleBody,
    result: AlertRule,
  },
  deleteAlertRule: {
    method: "DELETE",
    path: `${base}/rules/:ruleId`,
    summary: "Remove an alert rule",
    access: "user",
    result: ok,
  },
  listWebhooks: {
    method: "GET",
    path: `${base}/webhooks`,
    summary: "The project's webhooks (without their secrets)",
    access: "user",
    result: z.array(Webhook),
  },
  createWebhook: {
    method: "POST",
    path: `${base}/webhooks`,
    summary:
      "Add a webhook; the answer holds its signing secret, shown only this once. Targets the server refuses (loopback, link-local by default: WEBHOOK_ALLOW_PRIVATE) answer 400",
    access: "user",
    body: CreateWebhookBody,
    result: CreatedWebhook,
    status: 201,
  },
  deleteWebhook: {
    method: "DELETE",
    path: `${base}/webhooks/:webhookId`,
    summary: "Remove a webhook (its pending deliveries are dropped)",
    access: "user",
    result: ok,
  },
  testWebhook: {
    method: "POST",
    path: `${base}/webhooks/:webhookId/test`,
    summary:
      "Send a `test` alert to the webhook now; answers the delivery after its first attempt (retries follow as for any alert)",
    access: "user",
    result: AlertDelivery,
  },
  listAlertDeliveries: {
    method: "GET",
    path: `${base}/deliveries`,
    summary: `The delivery log, newest first: every attempt and its outcome (the newest ${alertLimits.deliveriesKept} finished deliveries per project are kept; pending ones until they finish)`,
    access: "user",
    query: DeliveriesQuery,
    result: z.array(AlertDelivery),
  },
} as const;
