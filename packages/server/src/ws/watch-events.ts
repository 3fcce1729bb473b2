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
      return { type: "status", at: iso(payload.at), status: "online" };
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
