import { idPrefixes } from "@sdk/protocol";
import type { Clock } from "../lib/clock.ts";
import { newSortableId } from "../lib/ids.ts";
import type { AuditLogRepository } from "../repositories/audit-log.ts";
import { auditView } from "./views.ts";

export interface AuditEvent {
  actorId: string | null;
  action: string;
  projectId?: string | null;
  targetId?: string | null;
  detail?: Record<string, unknown>;
}

/** Who did what, when: security-relevant changes are recorded here and readable by admins. */
export function auditService(repo: AuditLogRepository, clock: Clock) {
  return {
    record: (event: AuditEvent) => {
      const at = clock.now();
      return repo.insert({
        id: newSortableId(idPrefixes.audit, at),
        at,
        actorId: event.actorId,
        action: event.action,
        projectId: event.projectId ?? null,
        targetId: event.targetId ?? null,
        detail: JSON.stringify(event.detail ?? {}),
      });
    },
    list: async (limit: number, before?: string) => (await repo.list(limit, before)).map(auditView),
  };
}
export type AuditService = ReturnType<typeof auditService>;
