import type { Clock } from "../lib/clock.ts";
import type { Repositories } from "../repositories/index.ts";

/** `/ready` is true only when a real write to the database succeeds right now. */
export function readinessService(deps: {
  repos: Pick<Repositories, "readiness">;
  clock: Clock;
  dialect: string;
}) {
  return {
    async check(): Promise<{ status: "ready"; database: string }> {
      await deps.repos.readiness.write("probe", deps.clock.now());
      return { status: "ready", database: deps.dialect };
    },
  };
}
