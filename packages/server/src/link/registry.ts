import type { Board, CommandType } from "@sdk/protocol";

/** One live device connection, as the device socket exposes it to the services. */
export interface DeviceConnection {
  readonly deviceId: string;
  readonly projectId: string;
  readonly board: Board;
  /** Largest frame the device said it accepts (from its hello). */
  maxFrame: number;
  firmware: string;
  /** Sends one JSON frame. */
  send(message: object): void;
  close(code: number, reason: string): void;
  /** Sends a validated command and resolves with the device's checked result. */
  command(type: CommandType, args: Record<string, unknown>, timeoutMs: number): Promise<unknown>;
}

/**
 * Where each connected device's connection lives. The local implementation holds this process's
 * connections; a shared one (PostgreSQL or NATS) will route commands to the owning instance.
 */
export interface DeviceRegistry {
  /** Registers a connection; returns the one it replaces, if the device was already connected. */
  register(connection: DeviceConnection): DeviceConnection | undefined;
  /** Removes the connection if it is still the current one; false when it was already replaced. */
  unregister(connection: DeviceConnection): boolean;
  get(deviceId: string): DeviceConnection | undefined;
  count(): number;
  all(): Iterable<DeviceConnection>;
}

export class LocalDeviceRegistry implements DeviceRegistry {
  readonly #connections = new Map<string, DeviceConnection>();

  register(connection: DeviceConnection): DeviceConnection | undefined {
    const previous = this.#connections.get(connection.deviceId);
    this.#connections.set(connection.deviceId, connection);
    return previous === connection ? undefined : previous;
  }

  unregister(connection: DeviceConnection): boolean {
    if (this.#connections.get(connection.deviceId) !== connection) return false;
    this.#connections.delete(connection.deviceId);
    return true;
  }

  get(deviceId: string): DeviceConnection | undefined {
    return this.#connections.get(deviceId);
  }

  count(): number {
    return this.#connections.size;
  }

  all(): Iterable<DeviceConnection> {
    return this.#connections.values();
  }
}
