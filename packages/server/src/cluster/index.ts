import type { Kysely } from "kysely";
import type { ClusterConfig } from "../config.ts";
import type { DB } from "../db/schema.ts";
import type { Clock } from "../lib/clock.ts";
import type { DeviceRegistry } from "../link/registry.ts";
import { NatsCommandRouter } from "./command-router.ts";
import { NatsEventBus } from "./event-bus.ts";
import { InstanceLease, type LeaseDeps } from "./lease.ts";
import { connectNats, type NatsConnection } from "./nats.ts";
import { ClusterDeviceRegistry } from "./registry.ts";
import { type ClusterRepository, clusterRepository } from "./repository.ts";

interface Log {
  info(message: string): void;
  warn(message: string): void;
  error(obj: { err: unknown }, message: string): void;
}

/** How much longer than the command timeout a routed request waits for the owner's answer. */
const routeMarginMs = 2_000;

/** How long a stopping instance waits for NATS to take what it still has to send. */
const drainMs = 2_000;

/** The NATS-backed bus, registry and router of one cluster instance (docs/scaling.md). */
export interface Cluster {
  config: ClusterConfig;
  nc: NatsConnection;
  bus: NatsEventBus;
  registry: ClusterDeviceRegistry;
  router: NatsCommandRouter;
  repo: ClusterRepository;
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
    close() {
      closing ??= (async () => {
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

/**
 * The instance's lease; the device link takes the devices of dead instances offline. `clock` is
 * not used: lease times are the database's (the instances' clocks differ).
 */
export function clusterLease(
  cluster: Cluster,
  deps: { clock: Clock; log: Log; registry: DeviceRegistry; devices: LeaseDeps["devices"] },
): InstanceLease {
  return new InstanceLease({
    repo: cluster.repo,
    instanceId: cluster.config.instanceId,
    leaseSeconds: cluster.config.leaseSeconds,
    log: deps.log,
    devices: deps.devices,
    connected: () =>
      [...deps.registry.all()].map((c) => ({ deviceId: c.deviceId, generation: c.generation ?? 0 })),
  });
}
