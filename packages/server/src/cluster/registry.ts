import { type DeviceConnection, LocalDeviceRegistry } from "../link/registry.ts";
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
 * connections in the local registry it extends; ownership of the others is the devices' presence rows
 * in PostgreSQL (`instanceId` while online, written by the device link). Once a connection's online
 * write applied, the device link claims it: the claim carries the connection's generation, and an
 * instance serving the device with an older connection drops it and tells its `onReleased` handlers
 * (which close the socket with 4000, replaced); a claim older than the connection here changes
 * nothing, whatever order claims arrive in. So the newest connection is served, on one instance.
 */
export class ClusterDeviceRegistry extends LocalDeviceRegistry {
  override readonly instanceId: string;
  override readonly shared = true;
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
    super();
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

  override claim(connection: DeviceConnection): void {
    if (this.get(connection.deviceId) !== connection) return;
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

  override async ownerOf(deviceId: string): Promise<string | null> {
    if (this.get(deviceId)) return this.instanceId;
    const owner = await this.#owner(deviceId);
    // The row may still name this instance for a connection that is gone (its offline write queued).
    return owner === this.instanceId ? null : owner;
  }

  override onReleased(handler: Released): () => void {
    this.#released.add(handler);
    return () => this.#released.delete(handler);
  }

  /** Another instance serves the device with a newer connection: this one lets its own go. */
  #claimed(claim: Claim): void {
    if (claim.instanceId === this.instanceId) return;
    const connection = this.get(claim.deviceId);
    if (!connection || !(claim.generation > (connection.generation ?? 0))) return;
    this.unregister(connection);
    for (const handler of [...this.#released]) {
      try {
        handler(connection);
      } catch (error) {
        this.#onError(error);
      }
    }
  }
}
