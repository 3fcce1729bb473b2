import type { Board, CommandOutcomeRecord, LogEntry, PinState, Role } from "@sdk/protocol";

/** A device's identity on every device event: a per-device subscription routes on `deviceId`. */
interface OfDevice {
  projectId: string;
  deviceId: string;
}

/** The user whose request caused the event. */
interface ByActor {
  actorId: string;
}

/**
 * Every event the server publishes, by name. Payloads are plain JSON data (numbers for times,
 * no class instances), so a bus between instances (NATS, PostgreSQL NOTIFY) can carry them as they are.
 */
export interface ServerEvents {
  // ── live devices ─────────────────────────────────────────────────────────────────────────────
  /** The device said hello and is online (not published when a new connection replaces an open one). */
  "device.connected": OfDevice & { at: number; board: Board; firmware: string };
  /** The device's last connection closed. */
  "device.disconnected": OfDevice & { at: number; reason: string };
  "device.log": OfDevice & { entry: LogEntry };
  "device.state": OfDevice & { at: number; entityId: string; value: unknown };
  /** What the server knows about the board's pins changed (services/device-pins.ts). */
  "device.pins": OfDevice & { at: number; pins: PinState[] };
  /** An entry into the device's script ended in an uncaught error or a `Script execution timeout`. */
  "script.failed": OfDevice & { at: number; kind: "error" | "timeout" };
  /** A device message for its script (`onMessage`): gpio_change, uart_rx and custom types. */
  "device.message": OfDevice & {
    /** When it arrived (absent from publishers that predate it: the watch then uses its own time). */
    at?: number;
    message: { type: string } & Record<string, unknown>;
  };
  /**
   * A command sent to the device and its outcome, published when the outcome is known (`at`); it was
   * sent `ms` earlier. `source`: the device's script, or a user (REST, MCP, tag actions).
   */
  "device.command": OfDevice & {
    at: number;
    source: "script" | "api";
    command: string;
    args: Record<string, unknown>;
    result: CommandOutcomeRecord;
    ms: number;
  };
  /**
   * A message for the device's script that did not come from the device: from a user (REST,
   * dashboard, MCP, a tag message) or Home Assistant (`ha_command`).
   */
  "script.message": OfDevice & { at?: number; message: { type: string } & Record<string, unknown> };
  /** A message the device's script sent it (`this.env.DEVICE.send`). */
  "device.sent": OfDevice & { at: number; message: Record<string, unknown> };

  // ── devices ──────────────────────────────────────────────────────────────────────────────────
  /** `tags`: when it was created with some (bulk provisioning). */
  "device.created": OfDevice & ByActor & { name: string; board: Board; tags?: string[] };
  "device.renamed": OfDevice & ByActor & { name: string };
  /** The device no longer exists: its connection and its watchers close. `cause` is what was deleted. */
  "device.deleted": OfDevice & ByActor & { cause: "device" | "project" | "user" };
  /** A new secret: the old one stops working and the live connection closes. */
  "device.credentials_rotated": OfDevice & ByActor;
  /** The device's tags are now `tags` (sorted); `added` and `removed` say what changed. */
  "device.tags_changed": OfDevice & ByActor & { tags: string[]; added: string[]; removed: string[] };

  // ── projects, their env vars and deployments ────────────────────────────────────────────────
  "project.created": ByActor & { projectId: string; name: string };
  "project.renamed": ByActor & { projectId: string; name: string };
  "project.deleted": ByActor & { projectId: string };
  /** An env var was set or removed (the value itself is never published). */
  "env.changed": ByActor & { projectId: string; name: string; change: "set" | "unset" };
  "deployment.created": ByActor & { projectId: string; deploymentId: string; version: number };
  "deployment.activated": ByActor & { projectId: string; deploymentId: string; version: number };
  /** The deployment's bundle did not load; the previous version keeps running. */
  "deployment.failed": ByActor & { projectId: string; deploymentId: string };
  /** A canary (or a plain deploy that crash-looped) was rolled back; `reason` says why, with the figures. */
  "deployment.rolled_back": ByActor & {
    projectId: string;
    deploymentId: string;
    version: number;
    reason: string;
  };

  // ── firmware releases ────────────────────────────────────────────────────────────────────────
  /** An admin stored their own build as a release (bundled releases imported at boot are not events). */
  "firmware.uploaded": ByActor & { version: string; board: Board; sha256: string };
  /** An admin downloaded a backup of the whole server (its key and every account included). */
  "backup.downloaded": ByActor & { files: number; bytes: number };

  // ── accounts and credentials ─────────────────────────────────────────────────────────────────
  "user.registered": { userId: string; role: Role };
  "user.created": ByActor & { userId: string; email: string; role: Role };
  "user.role_changed": ByActor & { userId: string; role: Role };
  "user.deleted": ByActor & { userId: string; email: string; projects: number };
  "user.password_changed": { userId: string };
  "token.created": ByActor & { tokenId: string; name: string };
  "token.revoked": ByActor & { tokenId: string };
  /** A credential (or every credential of a user) stopped being valid: open watch sockets close. */
  "credential.revoked": Revocation;
}

export type Revocation =
  | { kind: "credential"; credentialId: string }
  | { kind: "user"; userId: string; exceptCredentialId?: string; sessionsOnly?: boolean };

export type EventType = keyof ServerEvents;

/** The events a per-device subscription hears: those whose payload names a device. */
type DeviceEventType = {
  [K in EventType]: ServerEvents[K] extends { deviceId: string } ? K : never;
}[EventType];

/** One event with its name, as a per-device subscriber receives it. */
export type DeviceEvent = { [K in DeviceEventType]: { type: K; payload: ServerEvents[K] } }[DeviceEventType];
