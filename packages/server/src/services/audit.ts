import { idPrefixes } from "@sdk/protocol";
import type { EventBus, ServerEvents, Unsubscribe } from "../events/bus.ts";
import type { Clock } from "../lib/clock.ts";
import { newSortableId } from "../lib/ids.ts";
import type { Lifecycle } from "../lifecycle/lifecycle.ts";
import type { AuditLogRepository } from "../repositories/audit-log.ts";
import { pageAfterCursor } from "./page.ts";
import { auditView } from "./views.ts";

/** Actions named by a rule rather than by their event. */
type RuleAction = "env.set" | "env.unset";

/** How one security-relevant event becomes an audit entry. */
interface AuditRule<E> {
  /** The payload field naming who acted (default `actorId`). */
  actor?: keyof E & string;
  /** The payload field naming what was acted on. */
  target?: keyof E & string;
  /** Payload fields kept as the entry's detail. */
  detail?: (keyof E & string)[];
  /** The action recorded, when it is not the event's name. */
  action?: (event: E) => RuleAction;
  /** Whether the event leaves an entry at all (default: always). */
  when?: (event: E) => boolean;
}

/** The security-relevant events and the entries they leave, as data. */
const rules = {
  "user.registered": { actor: "userId", target: "userId", detail: ["role"] },
  "user.password_changed": { actor: "userId", target: "userId" },
  "user.created": { target: "userId", detail: ["email", "role"] },
  "user.role_changed": { target: "userId", detail: ["role"] },
  "user.deleted": { target: "userId", detail: ["email", "projects"] },
  "token.created": { target: "tokenId", detail: ["name"] },
  "token.revoked": { target: "tokenId" },
  "project.created": { detail: ["name"] },
  "project.renamed": { detail: ["name"] },
  "project.deleted": {},
  "env.changed": { detail: ["name"], action: (e) => `env.${e.change}` },
  "device.created": { target: "deviceId", detail: ["name", "board"] },
  "device.renamed": { target: "deviceId", detail: ["name"] },
  // A device deleted with its project or its owner is covered by that entry.
  "device.deleted": { target: "deviceId", when: (e) => e.cause === "device" },
  "device.credentials_rotated": { target: "deviceId" },
  "deployment.created": { target: "deploymentId", detail: ["version"] },
  "deployment.activated": { target: "deploymentId", detail: ["version"] },
  "deployment.failed": { target: "deploymentId" },
  "deployment.rolled_back": { target: "deploymentId", detail: ["version", "reason"] },
  "firmware.uploaded": { target: "version", detail: ["board", "sha256"] },
  "backup.downloaded": { detail: ["files", "bytes"] },
} satisfies { [K in keyof ServerEvents]?: AuditRule<ServerEvents[K]> };

type AuditedEvent = keyof typeof rules;

/** What an audit entry says happened: the event's name, or the action its rule names. */
type AuditAction = Exclude<AuditedEvent, "env.changed"> | RuleAction;

function entryOf(type: AuditedEvent, event: Record<string, unknown>) {
  // Every rule whose event name is not an action names its action (env.changed → env.set/unset).
  const rule = rules[type] as AuditRule<Record<string, unknown>>;
  if (rule.when && !rule.when(event)) return undefined;
  const field = (name: string | undefined) => (name ? (event[name] as string) : null);
  return {
    actorId: field(rule.actor ?? "actorId"),
    action: rule.action ? rule.action(event) : (type as AuditAction),
    projectId: (event.projectId as string | undefined) ?? null,
    targetId: field(rule.target),
    detail: Object.fromEntries((rule.detail ?? []).map((name) => [name, event[name]])),
  };
}

/**
 * Who did what, when: the audit log subscribes to the security-relevant events and records them.
 * Publishers await the bus, so an entry is stored before the request that caused it answers; a
 * failed write goes to `onError` (the request itself has already succeeded).
 */
export class AuditRecorder implements Lifecycle {
  readonly name = "audit log";
  readonly #repo: AuditLogRepository;
  readonly #bus: EventBus;
  readonly #clock: Clock;
  #unsubscribe: Unsubscribe[] = [];

  constructor(deps: { repo: AuditLogRepository; bus: EventBus; clock: Clock }) {
    this.#repo = deps.repo;
    this.#bus = deps.bus;
    this.#clock = deps.clock;
  }

  start(): void {
    for (const type of Object.keys(rules) as AuditedEvent[]) {
      this.#unsubscribe.push(
        this.#bus.subscribe(type, (event) => {
          const entry = entryOf(type, event as unknown as Record<string, unknown>);
          return entry && this.#record(entry);
        }),
      );
    }
  }

  stop(): void {
    for (const off of this.#unsubscribe.splice(0)) off();
  }

  #record(entry: NonNullable<ReturnType<typeof entryOf>>): Promise<void> {
    const at = this.#clock.now();
    return this.#repo.insert({
      id: newSortableId(idPrefixes.audit, at),
      at,
      ...entry,
      detail: JSON.stringify(entry.detail),
    });
  }
}

/** Reading the audit log (admins). */
export function auditService(repo: AuditLogRepository) {
  return {
    list: async (limit: number, before?: string) =>
      pageAfterCursor(await repo.list(limit, before), "the audit log").map(auditView),
  };
}
