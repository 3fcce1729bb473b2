import type { Kysely } from "kysely";
import type { ClusterConfig } from "../config.ts";
import type { DB } from "../db/schema.ts";
import type { DeviceRegistry } from "../link/registry.ts";
import { NatsCommandRouter } from "./command-router.ts";
import { NatsEventBus } from "./event-bus.ts";
import { InstanceLease, type LeaseDeps } from "./lease.ts";
import { connectNats, type Log, type NatsConnection, NatsLink, RequestError, timedOut } from "./nats.ts";
import { ClusterDeviceRegistry } from "./registry.ts";
import { type ClusterRepository, clusterRepository } from "./repository.ts";

/** How much longer than the command timeout a routed request waits for the owner's answer. */
const routeMarginMs = 2_000;

/** How long a stopping instance waits for NATS to take what it still has to send. */
const drainMs = 2_000;

/** How long a booting instance waits for another one with its INSTANCE_ID to answer its ping. */
const pingTimeoutMs = 1_000;

/** How long after a reconnect the resync waits, so that the notices of several instances make one. */
const resyncDelayMs = 250;

/** Thrown at boot when another live instance of the cluster has this INSTANCE_ID. */
export class DuplicateInstanceError extends Error {
  constructor(instanceId: string, cluster: string) {
    super(
      `another live instance of cluster ${cluster} has INSTANCE_ID ${instanceId} (it answered on NATS): ` +
        "every instance needs an id of its own; unset INSTANCE_ID for a random one, or stop the other instance",
    );
    this.name = "DuplicateInstanceError";
  }
}

/** The NATS-backed bus, registry and router of one cluster instance (docs/scaling.md). */
export interface Cluster {
  config: ClusterConfig;
  nc: NatsConnection;
  bus: NatsEventBus;
  registry: ClusterDeviceRegistry;
  router: NatsCommandRouter;
  repo: ClusterRepository;
  /**
   * After NATS was unreachable (here, or at another instance, which says so on `<cluster>.resync`),
   * events may have been missed: the handlers re-read what matters from PostgreSQL.
   */
  onResync(handler: () => Promise<void> | void): void;
  /** Whether NATS is reachable now (for /health). */
  busConnected(): boolean;
  /**
   * The instance's lease; the device link takes the devices of dead instances offline. Lease times
   * are the database's clock (the instances' clocks differ).
   */
  lease(deps: { log: Log; registry: DeviceRegistry; devices: LeaseDeps["devices"] }): InstanceLease;
  /** Stops listening and closes the NATS connection (what was published is sent first). */
  close(): Promise<void>;
}

/**
 * Connects to NATS (a startup error naming the server if none answers) and builds the cluster's
 * implementations of the bus, the registry and the command router. Claims and routed requests are
 * listened to from here on, before any device can connect.
 */
export async function connectCluster(
  config: ClusterConfig,
  deps: { db: Kysely<DB>; log: Log; onError: (error: unknown) => void; commandTimeoutSeconds: number },
): Promise<Cluster> {
  const nc = await connectNats(config, deps.log);
  const link = NatsLink.of(nc, deps.log);
  const ping = `${config.name}.inst.${config.instanceId}.ping`;
  try {
    await nc.request(ping, "", { timeout: pingTimeoutMs });
    throw new DuplicateInstanceError(config.instanceId, config.name);
  } catch (error) {
    const nobody = (error instanceof RequestError && error.isNoResponders()) || timedOut(error);
    if (!nobody) {
      await nc.close().catch(() => {});
      throw error;
    }
  }
  nc.subscribe(ping, {
    callback: (error, msg) => {
      try {
        if (error) throw error;
        msg.respond(config.instanceId);
      } catch (err) {
        deps.onError(err);
      }
    },
  });
  const resyncHandlers: (() => Promise<void> | void)[] = [];
  let resyncTimer: NodeJS.Timeout | undefined;
  const resync = (why: string) => {
    if (resyncTimer || nc.isClosed()) return;
    resyncTimer = setTimeout(async () => {
      resyncTimer = undefined;
      deps.log.info(`cluster: ${why}: events may have been missed; resyncing from the database`);
      for (const handler of resyncHandlers) {
        try {
          await handler();
        } catch (error) {
          deps.onError(error);
        }
      }
    }, resyncDelayMs);
    resyncTimer.unref();
  };
  const resyncSubject = `${config.name}.resync`;
  nc.subscribe(resyncSubject, {
    callback: (error, msg) => {
      if (error) return deps.onError(error);
      resync(`instance ${msg.string()} lost NATS for a while`);
    },
  });
  link.onReconnect(() => {
    // What this instance published just before the disconnect may not have reached the others.
    try {
      nc.publish(resyncSubject, config.instanceId);
    } catch (error) {
      deps.onError(error);
    }
    resync("this instance lost NATS for a while");
  });
  const repo = clusterRepository(deps.db);
  const bus = new NatsEventBus(nc, config.name, deps.onError);
  const registry = new ClusterDeviceRegistry({
    nc,
    clusterName: config.name,
    instanceId: config.instanceId,
    ownerOf: repo.ownerOf,
    onError: deps.onError,
  });
  registry.start();
  const router = new NatsCommandRouter({
    nc,
    clusterName: config.name,
    registry,
    timeoutMs: deps.commandTimeoutSeconds * 1000 + routeMarginMs,
    onError: deps.onError,
  });
  let closing: Promise<void> | undefined;
  return {
    config,
    nc,
    bus,
    registry,
    router,
    repo,
    onResync(handler) {
      resyncHandlers.push(handler);
    },
    busConnected: () => link.connected,
    lease: (leaseDeps) =>
      new InstanceLease({
        repo,
        instanceId: config.instanceId,
        leaseSeconds: config.leaseSeconds,
        log: leaseDeps.log,
        devices: leaseDeps.devices,
        connected: () =>
          [...leaseDeps.registry.all()].map((c) => ({ deviceId: c.deviceId, generation: c.generation ?? 0 })),
      }),
    close() {
      closing ??= (async () => {
        clearTimeout(resyncTimer);
        router.stop();
        registry.stop();
        let timer: NodeJS.Timeout | undefined;
        try {
          await Promise.race([
            nc.drain(),
            new Promise((resolve) => {
              timer = setTimeout(resolve, drainMs);
            }),
          ]);
        } catch (error) {
          deps.onError(error);
        } finally {
          clearTimeout(timer);
          await nc.close().catch(() => {});
        }
      })();
      return closing;
    },
  };
}
