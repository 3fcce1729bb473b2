import type { Clock } from "../lib/clock.ts";
import type { Repositories } from "../repositories/index.ts";
import type { DiskStatus } from "./retention.ts";

/** `/ready` is true only when a real write to the database succeeds right now. */
export function readinessService(deps: {
  repos: Pick<Repositories, "readiness">;
  clock: Clock;
  dialect: string;
  disk: () => Promise<DiskStatus>;
}) {
  return {
    async check(): Promise<{ status: "ready"; database: string } & DiskStatus> {
      await deps.repos.readiness.write("probe", deps.clock.now());
      return { status: "ready", database: deps.dialect, ...(await deps.disk()) };
    },
    /** The disk figures alone, for a failed check (a full disk is a likely reason); `undefined` if unreadable. */
    disk: (): Promise<DiskStatus | undefined> => deps.disk().catch(() => undefined),
  };
}
