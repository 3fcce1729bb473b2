import type { Device, ProjectWatchEvent } from "@sdk/protocol";
import { type Dispatch, type SetStateAction, useRef } from "react";
import { api } from "../../api.ts";
import type { WatchState } from "../../hooks/useDeviceWatch.ts";
import { useProjectWatch } from "../../hooks/useProjectWatch.ts";

/** Puts a device in the list, or replaces the one with its id. */
const upsert = (list: Device[], device: Device) => [...list.filter((d) => d.id !== device.id), device];

/** The page shows each device's status; logs and state are the device page's. */
const filters = { events: ["status" as const] };

/**
 * Keeps the project's device list live over one project watch socket: the snapshot (every
 * device's status), status changes, devices added (elsewhere too), renamed and deleted.
 */
export function useLiveDevices(
  projectId: string,
  setDevices: Dispatch<SetStateAction<Device[]>>,
): WatchState {
  // A device read just before its deletion must not come back when the answer lands after it.
  const deleted = useRef(new Set<string>());
  // Status and created events do not carry every field (firmware version…): read the device for the rest.
  const refresh = (deviceId: string) =>
    api.getDevice({ params: { projectId, deviceId } }).then(
      (device) => !deleted.current.has(deviceId) && setDevices((list) => upsert(list, device)),
      () => {},
    );
  return useProjectWatch(projectId, filters, (event: ProjectWatchEvent) => {
    switch (event.type) {
      case "snapshot":
        setDevices(event.devices.map((d) => d.device));
        return;
      case "status":
        setDevices((list) =>
          list.map((d) =>
            d.id === event.deviceId ? { ...d, status: event.status, lastSeenAt: event.at } : d,
          ),
        );
        void refresh(event.deviceId);
        return;
      case "device_created":
        void refresh(event.deviceId);
        return;
      case "device_renamed":
        setDevices((list) => list.map((d) => (d.id === event.deviceId ? { ...d, name: event.name } : d)));
        return;
      case "device_tags":
        setDevices((list) => list.map((d) => (d.id === event.deviceId ? { ...d, tags: event.tags } : d)));
        return;
      case "device_deleted":
        deleted.current.add(event.deviceId);
        setDevices((list) => list.filter((d) => d.id !== event.deviceId));
        return;
    }
  });
}
