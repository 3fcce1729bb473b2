import type { ApiToken, AuditEntry, Device, Project, User } from "@sdk/protocol";
import type { AuditRow } from "../repositories/audit-log.ts";
import type { DeviceRow } from "../repositories/devices.ts";
import type { ProjectRow } from "../repositories/projects.ts";
import type { UserRow } from "../repositories/users.ts";

/** Database rows → the shapes the API promises (ISO timestamps, no secrets). */
export const iso = (ms: number) => new Date(ms).toISOString();
const isoOrNull = (ms: number | null) => (ms === null ? null : iso(ms));

export const userView = (u: UserRow): User => ({
  id: u.id,
  email: u.email,
  role: u.role,
  createdAt: iso(u.createdAt),
});

export const tokenView = (t: {
  id: string;
  name: string;
  createdAt: number;
  lastUsedAt: number | null;
}): ApiToken => ({
  id: t.id,
  name: t.name,
  createdAt: iso(t.createdAt),
  lastUsedAt: isoOrNull(t.lastUsedAt),
});

export const projectView = (p: ProjectRow): Project => ({
  id: p.id,
  name: p.name,
  ownerId: p.ownerId,
  createdAt: iso(p.createdAt),
  updatedAt: iso(p.updatedAt),
});

export const deviceView = (d: DeviceRow): Device => ({
  id: d.id,
  projectId: d.projectId,
  name: d.name,
  board: d.board,
  status: d.status,
  lastSeenAt: isoOrNull(d.lastSeenAt),
  firmwareVersion: d.firmwareVersion,
  createdAt: iso(d.createdAt),
  updatedAt: iso(d.updatedAt),
});

export const auditView = (a: AuditRow): AuditEntry => ({
  id: a.id,
  at: iso(a.at),
  actorId: a.actorId,
  action: a.action,
  projectId: a.projectId,
  targetId: a.targetId,
  detail: JSON.parse(a.detail) as Record<string, unknown>,
});
