import type { Device, StateValue } from "@sdk/protocol";
import type { DeviceEventHandler, EventBus, Handler } from "../events/bus.ts";
import type { Principal } from "./auth.ts";
import type { DeviceRef } from "./device-logs.ts";
import type { DeviceStateService } from "./device-state.ts";
import type { DevicesService } from "./devices.ts";

/** What a watcher of one device may see, and the stream of that device's events. */
export function watchService(deps: { devices: DevicesService; state: DeviceStateService; bus: EventBus }) {
  const { devices, state, bus } = deps;
  return {
    /** Throws `not_found` when the caller may not see the device. */
    authorize: (principal: Principal, device: DeviceRef): Promise<Device> =>
      devices.get(principal, device.projectId, device.deviceId),

    async snapshot(
      principal: Principal,
      device: DeviceRef,
    ): Promise<{ device: Device; state: StateValue[] }> {
      return {
        device: await devices.get(principal, device.projectId, device.deviceId),
        state: await state.latest(principal, device),
      };
    },

    subscribe: (deviceId: string, handler: DeviceEventHandler) => bus.subscribeDevice(deviceId, handler),

    /** Revoked credentials and lost access: a watcher authenticated by them must close. */
    onRevoked: (handler: Handler<"credential.revoked">) => bus.subscribe("credential.revoked", handler),
  };
}
