import type { WatchEvent } from "@sdk/protocol";
import type { DeviceEvent } from "../events/bus.ts";

/** A watch event before the stream numbers it. */
export type Unsequenced = WatchEvent extends infer E
  ? E extends WatchEvent
    ? Omit<E, "seq">
    : never
  : never;

const iso = (at: number) => new Date(at).toISOString();

/** What a watcher sees of a device event (undefined: nothing). */
export function toWatchEvent({ type, payload }: DeviceEvent): Unsequenced | undefined {
  switch (type) {
    case "device.connected":
      return {
        type: "status",
        at: iso(payload.at),
        status: "online",
        board: payload.board,
        firmware: payload.firmware,
      };
    case "device.disconnected":
      return {
        type: "status",
        at: iso(payload.at),
        status: "offline",
        ...(payload.reason ? { reason: payload.reason } : {}),
      };
    case "device.log":
      return { type: "log", at: payload.entry.at, entry: payload.entry };
    case "device.state":
      return { type: "state", at: iso(payload.at), entityId: payload.entityId, value: payload.value };
    case "device.pins":
      return { type: "pins", at: iso(payload.at), pins: payload.pins };
    default:
      return undefined;
  }
}

/** `?record=true`: what a recording needs besides status, log and state (undefined: nothing). */
export function toRecordEvent({ type, payload }: DeviceEvent): Unsequenced | undefined {
  switch (type) {
    case "device.message":
    case "script.message":
      return { type: "message", at: iso(payload.at ?? Date.now()), message: payload.message };
    case "device.command":
      return {
        type: "command",
        at: iso(payload.at),
        source: payload.source,
        command: payload.command,
        args: payload.args,
        result: payload.result,
        ms: payload.ms,
      };
    case "device.sent":
      return { type: "send", at: iso(payload.at), message: payload.message };
    default:
      return undefined;
  }
}
