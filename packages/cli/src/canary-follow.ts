import { setTimeout as sleep } from "node:timers/promises";
import { SdkApiError, type SdkClient, SdkNetworkError } from "@sdk/client";
import type { Deployment } from "@sdk/protocol";
import { localTime, type Output } from "./output.ts";
import { progressLine } from "./rollout-lines.ts";

/** How `sdk deploy --canary` paces its polls and when it gives up waiting (all in ms). */
export interface FollowPacing {
  /** Polls come at least this often… */
  minPollMs: number;
  /** …and at most this far apart. */
  maxPollMs: number;
  /** One poll gets this long for its answer. */
  requestMs: number;
  /** The server unreachable (network errors, timeouts) this long in a row: stop waiting. */
  offlineMs: number;
  /** Still undecided this long after the window ended: stop waiting. */
  afterWindowMs: number;
  /** Without a terminal (CI logs), a progress line this often, or when the figures change. */
  quietLineMs: number;
}

const defaultPacing: FollowPacing = {
  minPollMs: 1_000,
  maxPollMs: 10_000,
  requestMs: 10_000,
  offlineMs: 60_000,
  afterWindowMs: 60_000,
  quietLineMs: 30_000,
};

/** The wait before the next poll: a 60th of the window left, from 1 s to 10 s (1 s once it ended). */
export function pollDelay(
  remainingMs: number,
  pacing: Pick<FollowPacing, "minPollMs" | "maxPollMs">,
): number {
  return Math.min(pacing.maxPollMs, Math.max(pacing.minPollMs, remainingMs / 60));
}

/** One terminal row: a spinner line that wraps could not be redrawn in place. */
function fit(line: string, columns: number | undefined): string {
  const room = (columns ?? 0) - 4; // the spinner and its space before, "…" after
  return room > 20 && line.length > room ? `${line.slice(0, room - 1)}…` : line;
}

/**
 * How following ended: `stopped` null once the server decided, else why it stopped waiting with
 * the canary undecided (it goes on on the server), with the last deployment it saw.
 */
export interface FollowEnd {
  deployment: Deployment;
  stopped: string | null;
}

const seconds = (ms: number) => `${Math.round(ms / 1000)} s`;

/**
 * Polls a canary until the server decides (promoted or rolled back), showing its progress: a spinner
 * line on a terminal, a line when the figures change (at least every 30 s) otherwise, nothing in
 * JSON mode. Stops waiting, the canary going on on the server, on Ctrl-C, when the server cannot be
 * reached for a minute, when it answers an error (404: the deployment is gone), or a minute after
 * the window ended without a decision.
 */
export async function followCanary(
  client: SdkClient,
  projectId: string,
  started: Deployment,
  out: Output,
  pacing: Partial<FollowPacing> = {},
): Promise<FollowEnd> {
  const p = { ...defaultPacing, ...pacing };
  const params = { projectId, deploymentId: started.id };
  // The window (it just started) on this machine's monotonic clock: the server's clock may differ.
  const windowMs = started.rollout
    ? Date.parse(started.rollout.endsAt) - Date.parse(started.rollout.startedAt)
    : 0;
  const windowEnd = performance.now() + Math.max(0, windowMs);
  let deployment = started;
  let lastLine = Number.NEGATIVE_INFINITY;
  let lastFigures = "";
  let offlineSince: number | null = null;
  let failures = 0;
  const interrupted = new AbortController();
  const stop = () => interrupted.abort();
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  // JSON mode shows no progress; one line on stderr says what it is doing (and that Ctrl-C is safe).
  if (out.json)
    out.info(
      `Waiting for canary v${started.version}'s decision (Ctrl-C stops waiting; the canary goes on on the server)`,
    );
  const show = (d: Deployment) => {
    if (!d.rollout || out.json) return;
    const line = progressLine(d, d.rollout, Date.now());
    if (out.interactive) return out.step(fit(line, process.stderr.columns));
    const figures = JSON.stringify(d.rollout.health);
    if (figures === lastFigures && performance.now() - lastLine < p.quietLineMs) return;
    out.info(line);
    lastLine = performance.now();
    lastFigures = figures;
  };
  try {
    while (deployment.status === "canary") {
      show(deployment);
      const remaining = windowEnd - performance.now();
      if (-remaining >= p.afterWindowMs)
        return { deployment, stopped: `no decision ${seconds(-remaining)} after the window ended` };
      const delay =
        offlineSince === null
          ? pollDelay(remaining, p)
          : Math.min(p.maxPollMs, p.minPollMs * 2 ** Math.min(failures, 16));
      try {
        await sleep(delay, undefined, { signal: interrupted.signal });
      } catch {
        break;
      }
      try {
        deployment = await client.api.getDeployment({
          params,
          signal: AbortSignal.any([interrupted.signal, AbortSignal.timeout(p.requestMs)]),
        });
        offlineSince = null;
        failures = 0;
      } catch (error) {
        if (interrupted.signal.aborted) break;
        if (error instanceof SdkApiError) {
          if (error.status === 404) return { deployment, stopped: "the deployment no longer exists" };
          return { deployment, stopped: `the server answered ${error.code}: ${error.message}` };
        }
        if (!(error instanceof SdkNetworkError)) throw error;
        offlineSince ??= performance.now();
        failures++;
        const offline = performance.now() - offlineSince;
        if (offline >= p.offlineMs)
          return {
            deployment,
            stopped: `the server could not be reached for ${seconds(offline)}: ${error.message}`,
          };
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
    `or on the dashboard (Promote / Roll back end it early): ${host}/projects/${projectId}#deployments-title`,
  ].join("\n");
}
