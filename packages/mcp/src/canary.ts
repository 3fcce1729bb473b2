import { setTimeout as sleep } from "node:timers/promises";
import type { SdkClient } from "@sdk/client";
import { type CanaryTarget, canaryTargetOf, type Deployment, type RolloutHealth } from "@sdk/protocol";
import { z } from "zod";

// The deploy tool's canary: the target an agent writes, waiting for short windows, and the text it reads.

/** A canary whose window ends this soon after the call started is waited for (MCP clients time calls out). */
export const waitForDecisionSeconds = 50;
const pollMs = 1_000;

export const CanaryInput = z
  .string()
  .refine((text) => canaryTargetOf(text) !== null, 'a tag ("kitchen") or a share like "25%"')
  .describe(
    'Run the new version first only on the devices with this tag ("kitchen"), or on this share of the connected devices ("25%"); the others keep the live version. The server compares both sides\' health for windowSeconds, then promotes it to every device or rolls it back by itself.',
  );

export const CanaryAction = z
  .enum(["status", "promote", "roll_back"])
  .describe(
    "Instead of deploying: report on the project's canary (status), or end it now: promote (live on every device) or roll_back (its devices go back to the live version). Nothing is built.",
  );
export type CanaryAction = z.infer<typeof CanaryAction>;

/** "kitchen" → { tag }, "25%" → { percent }. */
export function canaryTarget(text: string): CanaryTarget {
  return canaryTargetOf(text) ?? { tag: text };
}

/** How waiting for a canary's decision ended: `stopped` null once decided, else why it stopped. */
interface Waited {
  deployment: Deployment;
  stopped: string | null;
}

/** The canary's window ends before `deadline` (a `performance.now()` time); it just started. */
export function windowEndsBefore(deployment: Deployment, deadline: number): boolean {
  const r = deployment.rollout;
  return deployment.status === "canary" && !!r && performance.now() + r.windowSeconds * 1000 < deadline;
}

/**
 * Polls a canary until the server decides, until `deadline` (a `performance.now()` time) or until
 * `signal` aborts (the agent cancelled the call); returns the last deployment read, and why it
 * stopped when still undecided (a failed read too: the canary goes on by itself either way).
 */
export async function waitForDecision(
  client: SdkClient,
  projectId: string,
  deployment: Deployment,
  until: { deadline: number; signal?: AbortSignal },
): Promise<Waited> {
  const params = { projectId, deploymentId: deployment.id };
  const cancelled = until.signal ?? new AbortController().signal;
  let current = deployment;
  while (current.status === "canary") {
    const left = until.deadline - performance.now();
    if (left <= 0) return { deployment: current, stopped: "not decided yet when the wait ended" };
    try {
      await sleep(Math.min(pollMs, left), undefined, { signal: cancelled });
      current = await client.api.getDeployment({
        params,
        signal: AbortSignal.any([cancelled, AbortSignal.timeout(Math.max(1, Math.ceil(left)))]),
      });
    } catch (error) {
      if (cancelled.aborted) return { deployment: current, stopped: "the call was cancelled" };
      return {
        deployment: current,
        stopped: `could not read it (${error instanceof Error ? error.message : String(error)})`,
      };
    }
  }
  return { deployment: current, stopped: null };
}

/** "rolled back: 12 of 12 …" → "12 of 12 …" (the line that shows it says "rolled back" already). */
const withoutDecision = (reason: string) => reason.replace(/^(rolled back|promoted):\s*/i, "");

const side = (h: RolloutHealth) =>
  `${h.devices} devices, ${h.calls} calls, ${h.errors} errors, ${h.timeouts} timeouts, ${h.connectErrors}/${h.connects} onDeviceConnect threw, ${h.disconnects} disconnects, ${h.commandErrors}/${h.commands} commands failed`;

/** What the agent reads about a deployment's rollout: where it stands, the figures, the decision. */
export function rolloutText(d: Deployment): string {
  const r = d.rollout;
  const lines: string[] = [];
  if (d.status === "canary" && r) {
    const target = r.target && ("tag" in r.target ? `tag ${r.target.tag}` : `${r.target.percent}%`);
    lines.push(
      `Canary v${d.version} is running on ${r.devices.length} device(s) (${target}: ${r.devices.join(", ")}) until ${r.endsAt}; the server promotes or rolls it back by itself then (or earlier when it goes wrong). Call deploy with canaryAction "status" to see how it is doing, "promote" or "roll_back" to end it now.`,
    );
  } else if (d.status === "active")
    lines.push(`v${d.version} is live on every device${r?.kind === "canary" ? " (canary promoted)" : ""}.`);
  else if (d.status === "rolled_back")
    lines.push(
      `v${d.version} was rolled back; the previous version stays live. Reason: ${withoutDecision(r?.reason ?? d.error ?? "none given")}`,
    );
  else lines.push(`v${d.version} is ${d.status}.`);
  if (r?.kind === "canary") {
    lines.push(`Canary side: ${side(r.health.canary)}`, `Stable side: ${side(r.health.stable)}`);
    // The reason starts with the decision ("promoted: within the thresholds…", "promoted by hand…").
    if (r.reason && d.status !== "rolled_back")
      lines.push(
        `Decision: ${/^(promoted|rolled back)\b/i.test(r.reason) ? r.reason : `${r.decision}: ${r.reason}`}`,
      );
  }
  return lines.join("\n");
}
