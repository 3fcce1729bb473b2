import { z } from "zod";
import { Board, ConnectionState } from "./fields.ts";
import { idPattern, idPrefixes } from "./ids.ts";
import { PinState } from "./pins.ts";
import { Device, LogEntry, StateValue } from "./resources.ts";
import { Tag, tagLimits } from "./tags.ts";

/**
 * The watch WebSocket (`/v1/projects/:projectId/devices/:deviceId/watch`): server → watcher JSON
 * frames. Every frame has a `seq` (1, 2, 3 … per connection) and an `at` timestamp.
 */
export const watchPath = "/v1/projects/:projectId/devices/:deviceId/watch";

/**
 * The query of the per-device watch socket. By default it carries the spec's three kinds (status,
 * log, state); `?pins=true` adds `pins` events (the dashboard's device page asks for them).
 */
export const DeviceWatchQuery = z.object({
  pins: z
    .enum(["true", "false"])
    .optional()
    .transform((v) => v === "true")
    .describe("true: also send `pins` events (the board's pins after every change)."),
  record: z
    .enum(["true", "false"])
    .optional()
    .transform((v) => v === "true")
    .describe(
      "true: also send what a recording needs (`sdk record`): `message` events (every message for the device's script, from the device or the API), `command` events (every command sent to the device, with its answer) and `send` events (messages the script sent the device).",
    ),
});

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
  /** With `online`: the board and firmware the device said hello with. */
  board: Board.optional(),
  firmware: z.string().optional(),
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
/** `?record=true`: a message for the device's script (`onMessage`), from the device or the API. */
export const MessageEvent = z.object({
  type: z.literal("message"),
  ...base,
  message: z.object({ type: z.string() }).catchall(z.unknown()),
});
/** The outcome of a command, as a recording keeps it. */
export const CommandOutcomeRecord = z.union([
  z.object({ ok: z.literal(true), value: z.unknown() }),
  z.object({ ok: z.literal(false), code: z.string(), message: z.string() }),
]);
export type CommandOutcomeRecord = z.infer<typeof CommandOutcomeRecord>;
/** `?record=true`: a command sent to the device (by its script, REST or MCP) and its answer; `source` says who sent it. */
export const CommandEvent = z.object({
  type: z.literal("command"),
  ...base,
  source: z.enum(["script", "api"]),
  command: z.string(),
  args: z.record(z.string(), z.unknown()),
  result: CommandOutcomeRecord,
  /** From sending the command to its answer. */
  ms: z.number(),
});
/** `?record=true`: a message the script sent the device (`this.env.DEVICE.send`). */
export const SendEvent = z.object({
  type: z.literal("send"),
  ...base,
  message: z.record(z.string(), z.unknown()),
});
/** Sent when the watcher read too slowly and `dropped` events were skipped. */
export const LaggedEvent = z.object({ type: z.literal("lagged"), ...base, dropped: z.number().int().min(1) });

export const WatchEvent = z.discriminatedUnion("type", [
  SnapshotEvent,
  StatusEvent,
  LogEvent,
  StateEvent,
  PinsEvent,
  LaggedEvent,
  MessageEvent,
  CommandEvent,
  SendEvent,
]);
export type WatchEvent = z.infer<typeof WatchEvent>;
export type WatchEventType = WatchEvent["type"];

/** Close codes of the watch socket. */
export const watchCloseCodes = {
  /** The token or session was revoked, or the user lost access: authenticate again. */
  revoked: 4001,
  /** The device was deleted (the project, for a project watcher). */
  gone: 4004,
  /** The watcher fell too far behind (see docs/protocol.md). */
  tooSlow: 4008,
} as const;

/**
 * The project watch WebSocket (`/v1/projects/:projectId/watch`): every device of a project on one
 * connection, devices created later included. Same authentication, `seq`, slow-watcher rule and
 * close codes as the per-device socket; every device event names its `deviceId`.
 */
export const projectWatchPath = "/v1/projects/:projectId/watch";

/** The event kinds a project watcher can choose with `?events=`. */
export const projectWatchKinds = ["status", "log", "state", "pins"] as const;
export type ProjectWatchKind = (typeof projectWatchKinds)[number];
/** Without `?events=`: the per-device socket's three kinds; `pins` only when named. */
export const projectWatchDefaultKinds = ["status", "log", "state"] as const satisfies ProjectWatchKind[];
/** At most this many ids in `?devices=`. */
export const projectWatchMaxDevices = 100;

const commaList = <T extends z.ZodType<unknown, string>>(item: T, max: number) =>
  z
    .string()
    .transform((s) =>
      s
        .split(",")
        .map((part) => part.trim())
        .filter((part) => part !== ""),
    )
    .pipe(z.array(item).min(1, "list at least one").max(max, `list at most ${max}`));

/** The query of the project watch socket: both filters are optional and comma-separated. */
export const ProjectWatchQuery = z.strictObject({
  devices: commaList(
    z.string().regex(idPattern(idPrefixes.device), "must be device ids (dev_…)"),
    projectWatchMaxDevices,
  )
    .optional()
    .describe(
      "Only these devices of the project (comma-separated ids); devices created later are not included.",
    ),
  events: commaList(z.enum(projectWatchKinds), projectWatchKinds.length)
    .optional()
    .describe(
      "Only these event kinds (comma-separated: status, log, state, pins; default status, log, state).",
    ),
  tags: commaList(Tag, tagLimits.perDevice)
    .optional()
    .describe(
      "Only devices with at least one of these tags (comma-separated). The filter follows tag changes: a device that gains a tag joins the stream with a `device_tags` event, one that loses it leaves after its `device_tags` event.",
    ),
});
export type ProjectWatchQuery = z.output<typeof ProjectWatchQuery>;

const ofDevice = { deviceId: z.string() };

export const ProjectSnapshotEvent = z.object({
  type: z.literal("snapshot"),
  ...base,
  /** Every (selected) device of the project with the latest value of each of its state entities. */
  devices: z.array(z.object({ device: Device, state: z.array(StateValue) })),
});
/** A device was added to the project after the snapshot (not sent with a `devices` filter). */
export const DeviceCreatedEvent = z.object({
  type: z.literal("device_created"),
  ...base,
  ...ofDevice,
  name: z.string(),
  board: Board,
  tags: z.array(z.string()).optional().describe("Its tags, when it was created with some"),
});
/** A device of the project was renamed. */
export const DeviceRenamedEvent = z.object({
  type: z.literal("device_renamed"),
  ...base,
  ...ofDevice,
  name: z.string(),
});
/**
 * A device's tags changed (to `tags`). With a `tags` filter: sent when a device joins the stream
 * (it gained a matching tag) and when it leaves it (it lost the last one); no events for it follow then.
 */
export const DeviceTagsEvent = z.object({
  type: z.literal("device_tags"),
  ...base,
  ...ofDevice,
  tags: z.array(z.string()),
});
/** A device of the project was deleted: no more events for it follow. */
export const DeviceDeletedEvent = z.object({ type: z.literal("device_deleted"), ...base, ...ofDevice });

export const ProjectWatchEvent = z.discriminatedUnion("type", [
  ProjectSnapshotEvent,
  StatusEvent.extend(ofDevice),
  LogEvent.extend(ofDevice),
  StateEvent.extend(ofDevice),
  PinsEvent.extend(ofDevice),
  DeviceCreatedEvent,
  DeviceRenamedEvent,
  DeviceDeletedEvent,
  DeviceTagsEvent,
  LaggedEvent,
]);
export type ProjectWatchEvent = z.infer<typeof ProjectWatchEvent>;
