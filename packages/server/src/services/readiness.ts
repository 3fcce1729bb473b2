import type { Clock } from "../lib/clock.ts";
import type { Repositories } from "../repositories/index.ts";
import type { DiskStatus } from "./retention.ts";

/**
 * An instance of a cluster as `/ready` reports it. `bus: "unreachable"` does not make it unready:
 * it still serves its own devices (and its requests for others answer `device_offline` at once),
 * and NATS being down for every instance must not take the whole cluster out of a load balancer.
 */
export interface ClusterStatus {
  instanceId: string;
  bus: "connected" | "unreachable";
}

/** `/ready` is true only when a real write to the database succeeds right now. */
export function readinessService(deps: {
  repos: Pick<Repositories, "readiness">;
  clock: Clock;
  dialect: string;
  disk: () => Promise<DiskStatus>;
  cluster?: () => ClusterStatus;
}) {
  return {
    async check(): Promise<{ status: "ready"; database: string; cluster?: ClusterStatus } & DiskStatus> {
      await deps.repos.readiness.write("probe", deps.clock.now());
      const cluster = deps.cluster?.();
      return {
        status: "ready",
        database: deps.dialect,
        ...(cluster ? { cluster } : {}),
        ...(await deps.disk()),
      };
    },
    /** The disk figures alone, for a failed check (a full disk is a likely reason); `undefined` if unreadable. */
    disk: (): Promise<DiskStatus | undefined> => deps.disk().catch(() => undefined),
  };
}
