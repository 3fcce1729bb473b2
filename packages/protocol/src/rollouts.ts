import { z } from "zod";
import { Tag, tagPattern } from "./tag.ts";

/** Limits and defaults of staged deploys (canaries) and the first-minute watch of a plain deploy. */
export const rolloutLimits = {
  /** A canary's window when the request names none (`CANARY_WINDOW_SECONDS` overrides it). */
  defaultWindowSeconds: 300,
  minWindowSeconds: 1,
  maxWindowSeconds: 86_400,
  /** A plain deploy is watched this long for a crash loop (every onDeviceConnect throwing). */
  watchSeconds: 60,
} as const;

/** Which devices run a canary: every device with a tag, or a share of the connected devices. */
export const CanaryTarget = z.union([
  z.strictObject({ tag: Tag.describe("Every device of the project with this tag runs the canary.") }),
  z.strictObject({
    percent: z
      .number()
      .int()
      .min(1)
      .max(99)
      .describe("This share of the project's connected devices (at least one) runs the canary."),
  }),
]);
export type CanaryTarget = z.infer<typeof CanaryTarget>;

/** A canary as people write it (`sdk deploy --canary`, the MCP deploy tool): "kitchen" → { tag }, "25%" → { percent }; null when it is neither. */
export function canaryTargetOf(text: string): CanaryTarget | null {
  const share = /^(\d+)%$/.exec(text);
  if (share) {
    const percent = Number(share[1]);
    return percent >= 1 && percent <= 99 ? { percent } : null;
  }
  return tagPattern.test(text) ? { tag: text } : null;
}

/** How a new (or re-activated) deployment goes live. */
export const RolloutOptions = z.strictObject({
  canary: CanaryTarget.optional().describe(
    "Run the deployment only on these devices for `windowSeconds`, compare their health with the stable version's, then promote it to every device or roll it back by itself.",
  ),
  windowSeconds: z
    .number()
    .int()
    .min(rolloutLimits.minWindowSeconds)
    .max(rolloutLimits.maxWindowSeconds)
    .optional()
    .describe("The canary's window (default `CANARY_WINDOW_SECONDS`, 300)."),
  rollback: z
    .boolean()
    .optional()
    .describe(
      "false: do not roll a plain deploy back when it crash-loops in its first minute (`sdk deploy --no-rollback`). Default true.",
    ),
});
export type RolloutOptions = z.infer<typeof RolloutOptions>;

/** What the server counted for one side of a rollout (the canary's devices, or the stable ones). */
export const RolloutHealth = z.object({
  /** Devices on this side that were connected at some point of the window. */
  devices: z.number().int(),
  /** Entries into the script: onDeviceConnect, onMessage, timers, command results. */
  calls: z.number().int(),
  /** Calls that ended in an uncaught error. */
  errors: z.number().int(),
  /** Calls that ended in `Script execution timeout`. */
  timeouts: z.number().int(),
  /** onDeviceConnect calls, and those that threw. */
  connects: z.number().int(),
  connectErrors: z.number().int(),
  /** Disconnects of this side's devices during the window. */
  disconnects: z.number().int(),
  /** Commands the scripts sent, and those that failed (device error, timeout, offline). */
  commands: z.number().int(),
  commandErrors: z.number().int(),
});
export type RolloutHealth = z.infer<typeof RolloutHealth>;

export const RolloutDecision = z.enum(["promoted", "rolled_back"]);
export type RolloutDecision = z.infer<typeof RolloutDecision>;

/**
 * How a deployment is being (or was) rolled out. `canary`: it ran on `devices` only, against the
 * stable version on the others. `watch`: a plain deploy, watched for a crash loop for its first minute.
 */
export const Rollout = z.object({
  kind: z.enum(["canary", "watch"]),
  target: CanaryTarget.nullable(),
  /** The canary's devices (empty for `watch`). */
  devices: z.array(z.string()),
  /** The deployment the canary is compared against (live before it), or null. */
  stableDeploymentId: z.string().nullable(),
  windowSeconds: z.number().int(),
  startedAt: z.string(),
  endsAt: z.string(),
  decision: RolloutDecision.nullable(),
  decidedAt: z.string().nullable(),
  /** Why it was promoted or rolled back, in a sentence (with the figures that decided it). */
  reason: z.string().nullable(),
  /** False when the deploy asked for no automatic rollback. */
  rollback: z.boolean(),
  health: z.object({ canary: RolloutHealth, stable: RolloutHealth }),
});
export type Rollout = z.infer<typeof Rollout>;
