import { setTimeout as sleep } from "node:timers/promises";
import type { SdkClient } from "@sdk/client";
import type { CanaryTarget, Deployment, RolloutHealth } from "@sdk/protocol";
import { z } from "zod";

// The deploy tool's canary: the target an agent writes, waiting for short windows, and the text it reads.

/** A canary window up to this long is waited for inside the tool call (MCP clients time calls out). */
export const waitForDecisionSeconds = 45;
const pollMs = 1_000;

export const CanaryInput = z
  .string()
  .regex(/^([a-z0-9][a-z0-9_-]{0,31}|[1-9][0-9]?%)$/, 'a tag ("kitchen") or a share like "25%"')
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
  const share = /^(\d+)%$/.exec(text);
  return share ? { percent: Number(share[1]) } : { tag: text };
}

/** Polls a canary until the server decides; returns the decided deployment. */
export async function waitForDecision(
  client: SdkClient,
  projectId: string,
  deployment: Deployment,
): Promise<Deployment> {
  let current = deployment;
  while (current.status === "canary") {
    await sleep(pollMs);
    current = await client.api.getDeployment({ params: { projectId, deploymentId: current.id } });
  }
  return current;
}

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
      `v${d.version} was rolled back; the previous version stays live. Reason: ${r?.reason ?? d.error ?? "none given"}`,
    );
  else lines.push(`v${d.version} is ${d.status}.`);
  if (r?.kind === "canary") {
    lines.push(`Canary side: ${side(r.health.canary)}`, `Stable side: ${side(r.health.stable)}`);
    if (r.reason && d.status !== "rolled_back") lines.push(`Decision: ${r.decision}: ${r.reason}`);
  }
  return lines.join("\n");
}
