import type { DeviceConnection, DeviceRegistry } from "../link/registry.ts";
import { type NatsConnection, NatsLink, type Subscription } from "./nats.ts";

/** Broadcast on `<cluster>.claim` once an instance's connection holds a device's presence row. */
interface Claim {
  deviceId: string;
  instanceId: string;
  /** The connection's generation (devices.claimSeq): only older connections are let go. */
  generation: number;
}

type Released = (connection: DeviceConnection) => void;

/**
 * The device registry of a cluster instance (docs/scaling.md). It holds this instance's
 * connections as the local registry does; ownership of the others is the devices' presence rows
 * in PostgreSQL (`instanceId` while online, written by the device link). Once a connection's online
 * write applied, the device link claims it: the claim carries the connection's generation, and an
 * instance serving the device with an older connection drops it and tells its `onReleased` handlers
 * (which close the socket with 4000, replaced); a claim older than the connection here changes
 * nothing, whatever order claims arrive in. So the newest connection is served, on one instance.
 */
export class ClusterDeviceRegistry implements DeviceRegistry {
  readonly instanceId: string;
  readonly shared = true;
  readonly #connections = new Map<string, DeviceConnection>();
  readonly #released = new Set<Released>();
  readonly #nc: NatsConnection;
  readonly #subject: string;
  readonly #owner: (deviceId: string) => Promise<string | null>;
  readonly #onError: (error: unknown) => void;
  #subscription: Subscription | undefined;

  constructor(options: {
    nc: NatsConnection;
    clusterName: string;
    instanceId: string;
    /** The serving instance per the database (a device's presence row). */
    ownerOf: (deviceId: string) => Promise<string | null>;
    onError: (error: unknown) => void;
  }) {
    this.#nc = options.nc;
    this.#subject = `${options.clusterName}.claim`;
    this.instanceId = options.instanceId;
    this.#owner = options.ownerOf;
    this.#onError = options.onError;
  }

  /** Listens to the other instances' claims (before any device can connect here). */
  start(): void {
    this.#subscription ??= this.#nc.subscribe(this.#subject, {
      callback: (error, msg) => {
        if (error) return this.#onError(error);
        try {
          this.#claimed(msg.json<Claim>());
        } catch (err) {
          this.#onError(err);
        }
      },
    });
  }

  stop(): void {
    const subscription = this.#subscription;
    this.#subscription = undefined;
    if (subscription && !this.#nc.isClosed()) subscription.unsubscribe();
  }

  register(connection: DeviceConnection): DeviceConnection | undefined {
    const previous = this.#connections.get(connection.deviceId);
    this.#connections.set(connection.deviceId, connection);
    return previous === connection ? undefined : previous;
  }

  claim(connection: DeviceConnection): void {
    if (this.#connections.get(connection.deviceId) !== connection) return;
    const claim: Claim = {
      deviceId: connection.deviceId,
      instanceId: this.instanceId,
      generation: connection.generation ?? 0,
    };
    try {
      // Through the outbox: a claim made while NATS is unreachable reaches the others once it is back.
      NatsLink.of(this.#nc).publish(this.#subject, JSON.stringify(claim), `the claim of ${claim.deviceId}`);
    } catch (error) {
      this.#onError(error);
    }
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

  async ownerOf(deviceId: string): Promise<string | null> {
    if (this.#connections.has(deviceId)) return this.instanceId;
    const owner = await this.#owner(deviceId);
    // The row may still name this instance for a connection that is gone (its offline write queued).
    return owner === this.instanceId ? null : owner;
  }

  onReleased(handler: Released): () => void {
    this.#released.add(handler);
    return () => this.#released.delete(handler);
  }

  /** Another instance serves the device with a newer connection: this one lets its own go. */
  #claimed(claim: Claim): void {
    if (claim.instanceId === this.instanceId) return;
    const connection = this.#connections.get(claim.deviceId);
    if (!connection || !(claim.generation > (connection.generation ?? 0))) return;
    this.#connections.delete(claim.deviceId);
    for (const handler of [...this.#released]) {
      try {
        handler(connection);
      } catch (error) {
        this.#onError(error);
      }
    }
  }
}
