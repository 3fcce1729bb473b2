import type { Board, CommandType } from "@sdk/protocol";

/** One live device connection, as the device socket exposes it to the services. */
export interface DeviceConnection {
  readonly deviceId: string;
  readonly projectId: string;
  readonly board: Board;
  /** Largest frame the device said it accepts (from its hello). */
  maxFrame: number;
  firmware: string;
  /**
   * In a cluster: the connection's place among the device's connections on every instance
   * (devices.claimSeq, taken when it authenticated). Undefined in one process.
   */
  readonly generation?: number;
  /** Sends one JSON frame. */
  send(message: object): void;
  close(code: number, reason: string): void;
  /** Sends a validated command and resolves with the device's checked result. */
  command(type: CommandType, args: Record<string, unknown>, timeoutMs: number): Promise<unknown>;
}

/**
 * Which instance serves each connected device (owns its socket), and this instance's own
 * connections. The local implementation is one process, which serves every connected device; the
 * cluster's (src/cluster/) keeps ownership in PostgreSQL and tells the previous owner over NATS when
 * a device reconnects elsewhere. `get`, `count` and `all` only ever see this instance's connections.
 */
export interface DeviceRegistry {
  /** This instance's id: `local` for one process, the cluster instance's id otherwise. */
  readonly instanceId: string;
  /**
   * True in a cluster: other instances serve devices too, so each connection takes a generation
   * when it authenticates (`DeviceConnection.generation`) and claims the device once it holds it.
   */
  readonly shared: boolean;
  /**
   * Registers a connection of this instance; returns the local one it replaces, if the device was
   * already connected here.
   */
  register(connection: DeviceConnection): DeviceConnection | undefined;
  /**
   * The registered connection holds the device's presence row now (its online write applied): an
   * instance serving the device with an older connection (a lower generation) lets it go
   * (`onReleased`); one with a newer connection keeps it. Nothing to do in one process.
   */
  claim(connection: DeviceConnection): void;
  /**
   * Removes the connection if it is still the current one; false when it was already replaced (here
   * or on another instance), in which case the device stays online.
   */
  unregister(connection: DeviceConnection): boolean;
  get(deviceId: string): DeviceConnection | undefined;
  count(): number;
  all(): Iterable<DeviceConnection>;
  /** The instance serving the device now, or null when none does (it is offline). */
  ownerOf(deviceId: string): Promise<string | null>;
  /**
   * Another instance took over a device this instance served: `connection` is no longer registered
   * here; its socket is to close with 4000 (replaced) and its script instance to end, without marking
   * the device offline. Never called in one process.
   */
  onReleased(handler: (connection: DeviceConnection) => void): () => void;
}

export class LocalDeviceRegistry implements DeviceRegistry {
  readonly instanceId: string = "local";
  readonly shared: boolean = false;
  readonly #connections = new Map<string, DeviceConnection>();

  register(connection: DeviceConnection): DeviceConnection | undefined {
    const previous = this.#connections.get(connection.deviceId);
    this.#connections.set(connection.deviceId, connection);
    return previous === connection ? undefined : previous;
  }

  claim(_connection: DeviceConnection): void {}

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

  async ownerOf(deviceId: string): Promise<string | null> {
    return this.#connections.has(deviceId) ? this.instanceId : null;
  }

  onReleased(_handler: (connection: DeviceConnection) => void): () => void {
    return () => {};
  }
}
