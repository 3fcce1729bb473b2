import { idPrefixes } from "@sdk/protocol";
import type { EventBus, ServerEvents, Unsubscribe } from "../events/bus.ts";
import type { Clock } from "../lib/clock.ts";
import { newSortableId } from "../lib/ids.ts";
import type { Lifecycle } from "../lifecycle/lifecycle.ts";
import type { AuditLogRepository } from "../repositories/audit-log.ts";
import { auditView } from "./views.ts";

/** One audit entry as an event describes it. */
export interface AuditEntry {
  actorId: string | null;
  action: AuditAction;
  projectId?: string | null;
  targetId?: string | null;
  detail?: Record<string, unknown>;
}

/** For each security-relevant event, the entry it leaves (or none: a device deleted with its project). */
const entries = {
  "user.registered": (e) => ({
    actorId: e.userId,
    action: "user.registered",
    targetId: e.userId,
    detail: { role: e.role },
  }),
  "user.password_changed": (e) => ({
    actorId: e.userId,
    action: "user.password_changed",
    targetId: e.userId,
  }),
  "user.created": (e) => ({
    actorId: e.actorId,
    action: "user.created",
    targetId: e.userId,
    detail: { email: e.email, role: e.role },
  }),
  "user.role_changed": (e) => ({
    actorId: e.actorId,
    action: "user.role_changed",
    targetId: e.userId,
    detail: { role: e.role },
  }),
  "user.deleted": (e) => ({
    actorId: e.actorId,
    action: "user.deleted",
    targetId: e.userId,
    detail: { email: e.email, projects: e.projects },
  }),
  "token.created": (e) => ({
    actorId: e.actorId,
    action: "token.created",
    targetId: e.tokenId,
    detail: { name: e.name },
  }),
  "token.revoked": (e) => ({ actorId: e.actorId, action: "token.revoked", targetId: e.tokenId }),
  "project.created": (e) => ({
    actorId: e.actorId,
    action: "project.created",
    projectId: e.projectId,
    detail: { name: e.name },
  }),
  "project.renamed": (e) => ({
    actorId: e.actorId,
    action: "project.renamed",
    projectId: e.projectId,
    detail: { name: e.name },
  }),
  "project.deleted": (e) => ({ actorId: e.actorId, action: "project.deleted", projectId: e.projectId }),
  "env.changed": (e) => ({
    actorId: e.actorId,
    action: e.change === "set" ? "env.set" : "env.unset",
    projectId: e.projectId,
    detail: { name: e.name },
  }),
  "device.created": (e) => ({
    actorId: e.actorId,
    action: "device.created",
    projectId: e.projectId,
    targetId: e.deviceId,
    detail: { name: e.name, board: e.board },
  }),
  "device.renamed": (e) => ({
    actorId: e.actorId,
    action: "device.renamed",
    projectId: e.projectId,
    targetId: e.deviceId,
    detail: { name: e.name },
  }),
  "device.deleted": (e) =>
    e.cause === "device"
      ? { actorId: e.actorId, action: "device.deleted", projectId: e.projectId, targetId: e.deviceId }
      : undefined,
  "device.credentials_rotated": (e) => ({
    actorId: e.actorId,
    action: "device.credentials_rotated",
    projectId: e.projectId,
    targetId: e.deviceId,
  }),
  "deployment.created": (e) => ({
    actorId: e.actorId,
    action: "deployment.created",
    projectId: e.projectId,
    targetId: e.deploymentId,
    detail: { version: e.version },
  }),
  "deployment.activated": (e) => ({
    actorId: e.actorId,
    action: "deployment.activated",
    projectId: e.projectId,
    targetId: e.deploymentId,
    detail: { version: e.version },
  }),
  "deployment.failed": (e) => ({
    actorId: e.actorId,
    action: "deployment.failed",
    projectId: e.projectId,
    targetId: e.deploymentId,
  }),
} satisfies { [K in keyof ServerEvents]?: (event: ServerEvents[K]) => AuditEntry | undefined };

/** What an audit entry says happened. */
type AuditAction =
  | "user.registered"
  | "user.password_changed"
  | "user.created"
  | "user.role_changed"
  | "user.deleted"
  | "token.created"
  | "token.revoked"
  | "project.created"
  | "project.renamed"
  | "project.deleted"
  | "env.set"
  | "env.unset"
  | "device.created"
  | "device.renamed"
  | "device.deleted"
  | "device.credentials_rotated"
  | "deployment.created"
  | "deployment.activated"
  | "deployment.failed";

type AuditedEvent = keyof typeof entries;

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
    for (const type of Object.keys(entries) as AuditedEvent[]) {
      const describe = entries[type] as (event: ServerEvents[AuditedEvent]) => AuditEntry | undefined;
      this.#unsubscribe.push(
        this.#bus.subscribe(type, (event) => {
          const entry = describe(event);
          return entry && this.#record(entry);
        }),
      );
    }
  }

  stop(): void {
    for (const off of this.#unsubscribe.splice(0)) off();
  }

  #record(entry: AuditEntry): Promise<void> {
    const at = this.#clock.now();
    return this.#repo.insert({
      id: newSortableId(idPrefixes.audit, at),
      at,
      actorId: entry.actorId,
      action: entry.action,
      projectId: entry.projectId ?? null,
      targetId: entry.targetId ?? null,
      detail: JSON.stringify(entry.detail ?? {}),
    });
  }
}

/** Reading the audit log (admins). */
export function auditService(repo: AuditLogRepository) {
  return {
    list: async (limit: number, before?: string) => (await repo.list(limit, before)).map(auditView),
  };
}
