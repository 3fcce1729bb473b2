import type { Device, StateValue } from "@sdk/protocol";
import { AppError } from "../errors.ts";
import type { DeviceEvent, DeviceEventHandler, EventBus, Handler, ServerEvents } from "../events/bus.ts";
import type { Principal } from "./auth.ts";
import type { DeviceRef } from "./device-logs.ts";
import type { DeviceStateService } from "./device-state.ts";
import type { DevicesService } from "./devices.ts";

/** What a project watcher hears: its devices' events, and the end of the project. */
export type ProjectEvent =
  | DeviceEvent
  | { type: "project.deleted"; payload: ServerEvents["project.deleted"] };

/** What a watcher of one device or of a whole project may see, and the stream of their events. */
export function watchService(deps: { devices: DevicesService; state: DeviceStateService; bus: EventBus }) {
  const { devices, state, bus } = deps;

  /**
   * The project's devices, only `only` when given (throws `not_found` for one that is not there),
   * only those with at least one of `tags` when given.
   */
  async function selected(
    principal: Principal,
    projectId: string,
    only?: string[],
    tags?: string[],
  ): Promise<Device[]> {
    const listed = await devices.list(principal, projectId);
    const all = tags ? listed.filter((d) => d.tags.some((t) => tags.includes(t))) : listed;
    if (!only) return all;
    const known = new Set(listed.map((d) => d.id));
    const missing = only.filter((id) => !known.has(id));
    if (missing.length > 0)
      throw new AppError("not_found", `No such device in this project: ${missing.join(", ")}`);
    const wanted = new Set(only);
    return all.filter((d) => wanted.has(d.id));
  }

  /** The open watch streams' handlers for a resync (`resync`). */
  const resyncs = new Set<() => void>();

  return {
    /** Throws `not_found` when the caller may not see the device. */
    authorize: (principal: Principal, device: DeviceRef): Promise<Device> =>
      devices.get(principal, device.projectId, device.deviceId),

    /** Throws `not_found` when the caller may not see the project, or one of the devices named. */
    authorizeProject: async (principal: Principal, projectId: string, only?: string[]): Promise<void> => {
      await selected(principal, projectId, only);
    },

    async snapshot(
      principal: Principal,
      device: DeviceRef,
    ): Promise<{ device: Device; state: StateValue[] }> {
      return {
        device: await devices.get(principal, device.projectId, device.deviceId),
        state: await state.latest(principal, device),
      };
    },

    async projectSnapshot(
      principal: Principal,
      projectId: string,
      only?: string[],
      tags?: string[],
    ): Promise<{ device: Device; state: StateValue[] }[]> {
      const list = await selected(principal, projectId, only, tags);
      return Promise.all(
        list.map(async (device) => ({
          device,
          state: await state.latest(principal, { projectId, deviceId: device.id }),
        })),
      );
    },

    subscribe: (deviceId: string, handler: DeviceEventHandler) => bus.subscribeDevice(deviceId, handler),

    /**
     * Resolves once the subscriptions made so far hear every instance of a cluster: a watcher's
     * snapshot is read after it, so nothing published after that read is missed.
     */
    ready: (): Promise<void> => bus.flush?.() ?? Promise.resolve(),

    /** What a watch stream does on `resync()` (it closes: its client reconnects for a fresh snapshot). */
    onResync(handler: () => void): () => void {
      resyncs.add(handler);
      return () => void resyncs.delete(handler);
    },

    /**
     * This instance of a cluster may have missed events (NATS was unreachable): every watch stream
     * ends, and its client reconnects for a new snapshot (its credentials checked again). Returns how
     * many streams ended.
     */
    resync(): number {
      const handlers = [...resyncs];
      for (const handler of handlers) handler();
      return handlers.length;
    },

    /**
     * Every device event of the project (devices created later included), then its deletion. A
     * deletion through another instance of a cluster ends the watch as well (`everywhere`).
     */
    subscribeProject(principal: Principal, projectId: string, handler: (event: ProjectEvent) => void) {
      const offDevices = bus.subscribeProject(projectId, handler);
      const everywhere = { everywhere: true };
      const offProject = bus.subscribe(
        "project.deleted",
        (payload) => {
          if (payload.projectId === projectId) handler({ type: "project.deleted", payload });
        },
        everywhere,
      );
      // Deleting a user deletes their projects without a project.deleted event each.
      const offUser = bus.subscribe(
        "user.deleted",
        async ({ actorId }) => {
          const gone = await devices.list(principal, projectId).then(
            () => false,
            (error: unknown) => error instanceof AppError && error.code === "not_found",
          );
          if (gone) handler({ type: "project.deleted", payload: { actorId, projectId } });
        },
        everywhere,
      );
      return () => {
        offDevices();
        offProject();
        offUser();
      };
    },

    /**
     * Revoked credentials and lost access: a watcher authenticated by them must close, whichever
     * instance of a cluster it is connected to.
     */
    onRevoked: (handler: Handler<"credential.revoked">) =>
      bus.subscribe("credential.revoked", handler, { everywhere: true }),
  };
}
