import type { DeviceStatus, LogEntry } from "@sdk/protocol";

/** What happens to a device, as services publish it and sockets (watchers, the device's own) hear it. */
export type DeviceEvent =
  | { kind: "status"; projectId: string; deviceId: string; at: number; status: DeviceStatus; reason?: string }
  | { kind: "log"; projectId: string; deviceId: string; entry: LogEntry }
  | { kind: "state"; projectId: string; deviceId: string; at: number; entityId: string; value: unknown }
  /** Credentials rotated, or the device deleted: its live connection must close. */
  | { kind: "revoked"; projectId: string; deviceId: string; reason: string }
  /** The device no longer exists: watchers close. */
  | { kind: "deleted"; projectId: string; deviceId: string };

export type DeviceEventHandler = (event: DeviceEvent) => void;

/**
 * Publish/subscribe for device events. The in-process implementation serves one server; a
 * PostgreSQL LISTEN/NOTIFY or NATS implementation will route between instances (DESIGN.md §8).
 */
export interface EventBus {
  publish(event: DeviceEvent): void;
  /** Events of one device. Returns the unsubscribe function. */
  subscribeDevice(deviceId: string, handler: DeviceEventHandler): () => void;
  /** Every event (for components that track all devices). */
  subscribeAll(handler: DeviceEventHandler): () => void;
}

export class InProcessEventBus implements EventBus {
  readonly #byDevice = new Map<string, Set<DeviceEventHandler>>();
  readonly #all = new Set<DeviceEventHandler>();
  readonly #onError: (error: unknown) => void;

  constructor(onError: (error: unknown) => void) {
    this.#onError = onError;
  }

  publish(event: DeviceEvent): void {
    const handlers = [...(this.#byDevice.get(event.deviceId) ?? []), ...this.#all];
    for (const handler of handlers) {
      try {
        handler(event);
      } catch (error) {
        this.#onError(error); // one broken subscriber must not starve the others
      }
    }
  }

  subscribeDevice(deviceId: string, handler: DeviceEventHandler): () => void {
    let set = this.#byDevice.get(deviceId);
    if (!set) {
      set = new Set();
      this.#byDevice.set(deviceId, set);
    }
    set.add(handler);
    return () => {
      set.delete(handler);
      if (set.size === 0 && this.#byDevice.get(deviceId) === set) this.#byDevice.delete(deviceId);
    };
  }

  subscribeAll(handler: DeviceEventHandler): () => void {
    this.#all.add(handler);
    return () => this.#all.delete(handler);
  }
}
