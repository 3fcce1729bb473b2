import { z } from "zod";
import { ConnectionState } from "./fields.ts";
import { PinState } from "./pins.ts";
import { Device, LogEntry, StateValue } from "./resources.ts";

/**
 * The watch WebSocket (`/v1/projects/:projectId/devices/:deviceId/watch`): server → watcher JSON
 * frames. Every frame has a `seq` (1, 2, 3 … per connection) and an `at` timestamp.
 */
export const watchPath = "/v1/projects/:projectId/devices/:deviceId/watch";

/** Sub-protocol a browser uses to send an API token: `new WebSocket(url, ["sdk.v1", "bearer." + token])`. */
export const watchSubprotocol = "sdk.v1";
export const bearerSubprotocolPrefix = "bearer.";

const base = { seq: z.number().int().min(1), at: z.string() };

export const SnapshotEvent = z.object({
  type: z.literal("snapshot"),
  ...base,
  device: Device,
  state: z.array(StateValue),
});
export const StatusEvent = z.object({
  type: z.literal("status"),
  ...base,
  status: ConnectionState,
  reason: z.string().optional(),
});
export const LogEvent = z.object({ type: z.literal("log"), ...base, entry: LogEntry });
export const StateEvent = z.object({
  type: z.literal("state"),
  ...base,
  entityId: z.string(),
  value: z.unknown(),
});
/** The board's pins changed (a command the server sent, or a gpio_change): every known pin. */
export const PinsEvent = z.object({ type: z.literal("pins"), ...base, pins: z.array(PinState) });
/** Sent when the watcher read too slowly and `dropped` events were skipped. */
export const LaggedEvent = z.object({ type: z.literal("lagged"), ...base, dropped: z.number().int().min(1) });

export const WatchEvent = z.discriminatedUnion("type", [
  SnapshotEvent,
  StatusEvent,
  LogEvent,
  StateEvent,
  PinsEvent,
  LaggedEvent,
]);
export type WatchEvent = z.infer<typeof WatchEvent>;
export type WatchEventType = WatchEvent["type"];

/** Close codes of the watch socket. */
export const watchCloseCodes = {
  /** The token or session was revoked, or the user lost access: authenticate again. */
  revoked: 4001,
  /** The device was deleted. */
  gone: 4004,
  /** The watcher fell too far behind (see docs/protocol.md). */
  tooSlow: 4008,
} as const;
