import { type Board, type LogEntry, textLimits } from "@sdk/protocol";
import { AppError } from "../errors.ts";
import type { EventBus } from "../events/bus.ts";
import type { Clock } from "../lib/clock.ts";
import { newSortableId } from "../lib/ids.ts";
import type { Repositories } from "../repositories/index.ts";
import { type Principal, viewerOf } from "./auth.ts";
import { pageAfterCursor } from "./page.ts";
import { iso } from "./views.ts";

export interface DeviceRef {
  projectId: string;
  deviceId: string;
}

/** 404 unless the caller may see this device (in this project). */
export async function requireVisibleDevice(
  repos: Pick<Repositories, "devices">,
  principal: Principal,
  device: DeviceRef,
): Promise<{ board: Board }> {
  const row = await repos.devices.find(viewerOf(principal), device.projectId, device.deviceId);
  if (!row) throw new AppError("not_found", "No such device");
  return { board: row.board };
}

const pruneEvery = 50;
/** Script and system lines are kept to the length the protocol allows a device's log line. */
const maxMessageLength = textLimits.logMessage;

/** Device logs: the device's own lines plus system entries, bounded per device by count and age. */
export function deviceLogsService(deps: {
  repos: Pick<Repositories, "deviceLogs" | "devices">;
  bus: EventBus;
  clock: Clock;
  limits: { logMaxEntries: number };
  onError: (error: unknown) => void;
}) {
  const { repos, bus, clock, limits, onError } = deps;
  const sinceLastPrune = new Map<string, number>();

  return {
    /**
     * Publishes an entry to watchers at once and stores it with the next group commit. The returned
     * promise settles when it is stored and never rejects: a log line must not break a connection,
     * and callers on hot paths need not wait for it.
     */
    append(
      device: DeviceRef,
      level: LogEntry["level"],
      source: LogEntry["source"],
      message: string,
    ): Promise<void> {
      const at = clock.now();
      const text = message.length > maxMessageLength ? `${message.slice(0, maxMessageLength)}…` : message;
      const row = {
        id: newSortableId("log", at),
        deviceId: device.deviceId,
        at,
        level,
        source,
        message: text,
      };
      void bus.publish("device.log", {
        projectId: device.projectId,
        deviceId: device.deviceId,
        entry: { id: row.id, at: iso(at), level, source, message: text },
      });
      const count = (sinceLastPrune.get(device.deviceId) ?? 0) + 1;
      const prune = count >= pruneEvery;
      if (prune) sinceLastPrune.delete(device.deviceId);
      else sinceLastPrune.set(device.deviceId, count);
      const store = () =>
        repos.deviceLogs.insert(row, prune ? { pruneTo: limits.logMaxEntries } : {}).catch(onError);
      if (!repos.deviceLogs.room()) return store();
      return (async () => {
        for (let room = repos.deviceLogs.room(); room; room = repos.deviceLogs.room()) await room;
        await store();
      })();
    },

    async list(principal: Principal, device: DeviceRef, limit: number, before?: string): Promise<LogEntry[]> {
      await requireVisibleDevice(repos, principal, device);
      const rows = pageAfterCursor(
        await repos.deviceLogs.list(viewerOf(principal), device.projectId, device.deviceId, limit, before),
        "this device's log",
      );
      return rows.map((r) => ({
        id: r.id,
        at: iso(r.at),
        level: r.level,
        source: r.source,
        message: r.message,
      }));
    },
  };
}
export type DeviceLogsService = ReturnType<typeof deviceLogsService>;
