import { entityIdPattern, jsonValueProblem, type StateValue, stateLimits } from "@sdk/protocol";
import { AppError } from "../errors.ts";
import type { EventBus } from "../events/bus.ts";
import type { Clock } from "../lib/clock.ts";
import { newSortableId } from "../lib/ids.ts";
import type { Repositories } from "../repositories/index.ts";
import { type Principal, viewerOf } from "./auth.ts";
import { type DeviceRef, requireVisibleDevice } from "./device-logs.ts";
import { pageAfterCursor } from "./page.ts";
import { iso } from "./views.ts";

const pruneEvery = 50;

/** The latest value of each entity of a device, with a bounded history per entity. */
export function deviceStateService(deps: {
  repos: Pick<Repositories, "deviceState" | "devices">;
  bus: EventBus;
  clock: Clock;
  limits: { stateHistoryMaxEntries: number };
}) {
  const { repos, bus, clock, limits } = deps;
  const sinceLastPrune = new Map<string, number>();
  const knownEntities = new Map<string, Set<string>>();
  const checking = new Map<string, Promise<void>>();

  return {
    /** Validates, stores and publishes a value. Throws `invalid_argument` for a bad id, size or count. */
    async record(device: DeviceRef, entityId: string, value: unknown): Promise<void> {
      if (!entityIdPattern.test(entityId)) {
        throw new AppError(
          "invalid_argument",
          `entity_id must match ${entityIdPattern} (got ${JSON.stringify(entityId)})`,
        );
      }
      const problem = jsonValueProblem(value);
      if (problem) throw new AppError("invalid_argument", `the value of ${entityId}: ${problem}`);
      const json = JSON.stringify(value ?? null);
      if (json === undefined || Buffer.byteLength(json) > stateLimits.valueMaxBytes) {
        throw new AppError(
          "invalid_argument",
          `the value of ${entityId} must be JSON of at most ${stateLimits.valueMaxBytes} bytes`,
        );
      }
      const key = `${device.deviceId}\u0000${entityId}`;
      if (!knownEntities.get(device.deviceId)?.has(entityId)) {
        // One count per new entity: values that arrive while it runs wait for the same one, so
        // they go on in the order they came (separate reads could finish in any order).
        let check = checking.get(key);
        if (!check) {
          check = (async () => {
            const count = await repos.deviceState.countEntities(device.deviceId);
            if (count >= stateLimits.entitiesPerDevice) {
              throw new AppError(
                "invalid_argument",
                `a device can have at most ${stateLimits.entitiesPerDevice} state entities`,
              );
            }
            let entities = knownEntities.get(device.deviceId);
            if (!entities) {
              entities = new Set();
              knownEntities.set(device.deviceId, entities);
            }
            entities.add(entityId);
          })();
          checking.set(key, check);
          const done = () => checking.delete(key);
          check.then(done, done);
        }
        await check;
      }
      const count = (sinceLastPrune.get(key) ?? 0) + 1;
      const prune = count >= pruneEvery;
      if (prune) sinceLastPrune.delete(key);
      else sinceLastPrune.set(key, count);
      // Room is checked again after each wait: writers let go together may fill the queue again.
      for (let room = repos.deviceState.room(); room; room = repos.deviceState.room()) await room;
      const at = clock.now();
      await repos.deviceState.record({
        historyId: newSortableId("sth", at),
        deviceId: device.deviceId,
        entityId,
        value: json,
        at,
        ...(prune ? { pruneTo: limits.stateHistoryMaxEntries } : {}),
      });
      void bus.publish("device.state", {
        projectId: device.projectId,
        deviceId: device.deviceId,
        at,
        entityId,
        value: JSON.parse(json),
      });
    },

    async latest(principal: Principal, device: DeviceRef): Promise<StateValue[]> {
      await requireVisibleDevice(repos, principal, device);
      const rows = await repos.deviceState.latest(viewerOf(principal), device.projectId, device.deviceId);
      return rows.map((r) => ({
        entityId: r.entityId,
        value: JSON.parse(r.value),
        updatedAt: iso(r.updatedAt),
      }));
    },

    async history(principal: Principal, device: DeviceRef, entityId: string, limit: number, before?: string) {
      await requireVisibleDevice(repos, principal, device);
      const rows = pageAfterCursor(
        await repos.deviceState.history(
          viewerOf(principal),
          device.projectId,
          device.deviceId,
          entityId,
          limit,
          before,
        ),
        `the history of ${entityId}`,
      );
      return rows.map((r) => ({ id: r.id, value: JSON.parse(r.value) as unknown, at: iso(r.at) }));
    },

    forget(deviceId: string): void {
      knownEntities.delete(deviceId);
    },
  };
}
export type DeviceStateService = ReturnType<typeof deviceStateService>;
