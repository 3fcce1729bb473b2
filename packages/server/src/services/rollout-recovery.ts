import type { Rollout } from "@sdk/protocol";
import type { EventBus } from "../events/bus.ts";
import type { Clock } from "../lib/clock.ts";
import type { Repositories } from "../repositories/index.ts";
import { iso } from "./views.ts";

const serverRestarted = "the server restarted during the canary window";
/** In a cluster, how long after its window's end a watch is left to the instance running it. */
const clusterGraceMs = 60_000;

/**
 * At boot: a canary still in its window was cut off (its members run the stable version now), so
 * it is rolled back; a plain deploy's watch cut off is promoted. In a cluster, a watch whose window
 * has not long ended is left to the instance running it (canaries cannot run there: one left from
 * a server of one instance is rolled back).
 */
export async function recoverRollouts(deps: {
  repos: Pick<Repositories, "deployments">;
  bus: EventBus;
  clock: Clock;
  /** A line in the log of each of the rollout's devices. */
  deviceLog: (l: { projectId: string; rollout: Rollout }, level: "warn", message: string) => Promise<unknown>;
  cluster: boolean;
}): Promise<void> {
  const { repos, bus, clock, deviceLog } = deps;
  for (const row of await repos.deployments.undecided()) {
    const rollout = row.rollout ? (JSON.parse(row.rollout) as Rollout) : null;
    if (!rollout) continue;
    if (deps.cluster && row.status !== "canary" && Date.parse(rollout.endsAt) + clusterGraceMs > clock.now())
      continue;
    const decidedAt = iso(clock.now());
    if (row.status === "canary") {
      const decided = { ...rollout, decision: "rolled_back" as const, decidedAt, reason: serverRestarted };
      await repos.deployments.markRolledBack(
        row.projectId,
        row.id,
        serverRestarted,
        JSON.stringify(decided),
        null,
      );
      await deviceLog(
        { projectId: row.projectId, rollout },
        "warn",
        `deployment v${row.version} (canary) rolled back: ${serverRestarted}; this device runs the stable version again`,
      );
      await bus.publish("deployment.rolled_back", {
        actorId: row.createdBy ?? "",
        projectId: row.projectId,
        deploymentId: row.id,
        version: row.version,
        reason: serverRestarted,
      });
    } else {
      const reason = "promoted: the server restarted during the first-minute watch";
      await repos.deployments.setRollout(
        row.id,
        JSON.stringify({ ...rollout, decision: "promoted", decidedAt, reason }),
      );
    }
  }
}
