import {
  type ApiToken,
  type AuditEntry,
  compareFirmwareVersions,
  type Device,
  type Project,
  type User,
} from "@sdk/protocol";
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

/** The newest release's version when it is newer than what the device runs; `null` when unknown or up to date. */
const firmwareUpdate = (running: string | null, newest: string | null) =>
  running !== null && newest !== null && (compareFirmwareVersions(newest, running) ?? 0) > 0 ? newest : null;

/** `newestFirmware`: the newest release's version (FirmwareService.newestVersion). */
export const deviceView = (d: DeviceRow, newestFirmware: string | null, tags: string[] = []): Device => ({
  id: d.id,
  projectId: d.projectId,
  name: d.name,
  board: d.board,
  status: d.status,
  lastSeenAt: isoOrNull(d.lastSeenAt),
  firmwareVersion: d.firmwareVersion,
  firmwareUpdate: firmwareUpdate(d.firmwareVersion, newestFirmware),
  createdAt: iso(d.createdAt),
  updatedAt: iso(d.updatedAt),
  tags,
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
