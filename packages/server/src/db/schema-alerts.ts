import type { AlertEventType, AlertRuleKind } from "@sdk/protocol";

type Millis = number;

export interface AlertRulesTable {
  id: string;
  projectId: string;
  kind: AlertRuleKind;
  minutes: number | null;
  count: number | null;
  windowMinutes: number | null;
  createdAt: Millis;
}

export interface AlertWebhooksTable {
  id: string;
  projectId: string;
  name: string;
  url: string;
  /** SecretBox ciphertext bound to `webhook:<projectId>:<id>`. */
  secretEncrypted: string;
  createdAt: Millis;
}

/** The durable queue and the delivery log in one: pending rows are retried, survive restarts. */
export interface AlertDeliveriesTable {
  /** Sortable by time. */
  id: string;
  projectId: string;
  webhookId: string;
  type: AlertEventType;
  /** The exact JSON body signed and sent on every attempt. */
  body: string;
  status: "pending" | "delivered" | "failed";
  /** JSON: [{ at, status, error }]. */
  attempts: string;
  nextAttemptAt: Millis | null;
  createdAt: Millis;
}

/** An alert already sent for an episode that has not ended (device offline, errors burst). */
export interface AlertEpisodesTable {
  ruleId: string;
  /** What the episode is about: a device id. */
  subject: string;
  openedAt: Millis;
}
