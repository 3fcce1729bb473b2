import { setTimeout as sleep } from "node:timers/promises";
import { type SdkClient, SdkNetworkError } from "@sdk/client";
import type { Deployment } from "@sdk/protocol";
import { localTime, type Output } from "./output.ts";
import { progressLine } from "./rollout-lines.ts";

/** How often `sdk deploy --canary` asks the server how the canary is doing. */
const pollMs = 1_000;
/** Without a terminal (CI logs), a progress line this often rather than on every poll. */
const quietLineMs = 5_000;
/** Network failures in a row before giving up following (the canary goes on by itself). */
const maxNetworkFailures = 10;

/** One terminal row: a spinner line that wraps could not be redrawn in place. */
function fit(line: string, columns: number | undefined): string {
  const room = (columns ?? 0) - 4; // the spinner and its space before, "…" after
  return room > 20 && line.length > room ? `${line.slice(0, room - 1)}…` : line;
}

/** Why following stopped early: Ctrl-C, or the server could not be reached for a while. */
export type FollowEnd =
  | { deployment: Deployment; stopped: null }
  | { deployment: Deployment; stopped: string };

/**
 * Polls a canary until the server decides (promoted or rolled back), showing its progress: a spinner
 * line on a terminal, a line every few seconds otherwise, nothing in JSON mode. Ctrl-C stops
 * following (the canary goes on on the server).
 */
export async function followCanary(
  client: SdkClient,
  projectId: string,
  started: Deployment,
  out: Output,
): Promise<FollowEnd> {
  let deployment = started;
  let lastLine = Number.NEGATIVE_INFINITY;
  let failures = 0;
  const interrupted = new AbortController();
  const stop = () => interrupted.abort();
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  try {
    while (deployment.status === "canary") {
      const rollout = deployment.rollout;
      if (rollout && !out.json) {
        const line = progressLine(deployment, rollout, Date.now());
        if (out.interactive) out.step(fit(line, process.stderr.columns));
        else if (performance.now() - lastLine >= quietLineMs) {
          out.info(line);
          lastLine = performance.now();
        }
      }
      try {
        await sleep(pollMs, undefined, { signal: interrupted.signal });
      } catch {
        break;
      }
      try {
        deployment = await client.api.getDeployment({ params: { projectId, deploymentId: deployment.id } });
        failures = 0;
      } catch (error) {
        if (!(error instanceof SdkNetworkError) || ++failures >= maxNetworkFailures) {
          out.stopSpinner();
          if (error instanceof SdkNetworkError)
            return { deployment, stopped: `the server could not be reached: ${error.message}` };
          throw error;
        }
      }
    }
  } finally {
    process.off("SIGINT", stop);
    process.off("SIGTERM", stop);
    out.stopSpinner();
  }
  if (deployment.status === "canary") return { deployment, stopped: "interrupted" };
  return { deployment, stopped: null };
}

/** What to tell someone who stopped following (or chose --no-wait): the canary decides by itself. */
export function followHint(deployment: Deployment, host: string, projectId: string): string {
  const endsAt = deployment.rollout ? ` at ${localTime(deployment.rollout.endsAt)}` : "";
  return [
    `The canary decides by itself${endsAt}. Follow it with: sdk status --project ${projectId}`,
    `or on the dashboard (Promote / Roll back end it early): ${host}/projects/${projectId}#deployments`,
  ].join("\n");
}
