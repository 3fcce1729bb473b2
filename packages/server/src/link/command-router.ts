import { AppError } from "../errors.ts";

/** A device of a project (the same shape as the services' DeviceRef). */
export interface RoutedDevice {
  projectId: string;
  deviceId: string;
}

/** What is asked of the instance serving a device. */
export type RoutedRequest =
  /** A command (REST, MCP, tags, scripts): answered with the device's result. */
  | { kind: "command"; type: string; args: Record<string, unknown>; source: "script" | "api" }
  /** A raw typed message for the device (a script's `DEVICE.send`): answered with null. */
  | { kind: "raw"; message: Record<string, unknown> }
  /** A message for the device's script (REST, dashboard, MCP, tags, Home Assistant): answered with null. */
  | { kind: "message"; message: Record<string, unknown> };

/** Runs a request on the instance that received it, for a device it serves (or finds offline). */
export type RoutedHandler = (device: RoutedDevice, request: RoutedRequest) => Promise<unknown>;

/**
 * Sends a request to the instance serving the device, and its answer (or its error, as the same
 * AppError code and message) back to the caller. The local implementation is one process: it runs
 * the request here. The cluster's (src/cluster/) runs it here when this instance serves the device,
 * else on its owner over NATS request/reply, with the same timeout and error codes; a device no
 * instance serves is handled here (which answers `device_offline`).
 */
export interface CommandRouter {
  send(device: RoutedDevice, request: RoutedRequest): Promise<unknown>;
  /** What this instance does with the requests for the devices it serves; set once, at boot. */
  serve(handler: RoutedHandler): void;
}

export class LocalCommandRouter implements CommandRouter {
  #handler: RoutedHandler | undefined;

  send(device: RoutedDevice, request: RoutedRequest): Promise<unknown> {
    if (!this.#handler) return Promise.reject(new AppError("device_offline"));
    return this.#handler(device, request);
  }

  serve(handler: RoutedHandler): void {
    this.#handler = handler;
  }
}
