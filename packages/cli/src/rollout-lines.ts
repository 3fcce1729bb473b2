import {
  type CanaryTarget,
  canaryTargetOf,
  type Deployment,
  type Rollout,
  type RolloutHealth,
  rolloutLimits,
} from "@sdk/protocol";
import { UsageError } from "./errors.ts";

// What `sdk deploy --canary` reads from its flags and prints while the canary runs.

/** `--canary kitchen` → { tag: "kitchen" }; `--canary 25%` → { percent: 25 }. */
export function parseCanary(value: string): CanaryTarget {
  const target = canaryTargetOf(value);
  if (target) return target;
  const share = /^(\d+(?:\.\d+)?)\s*%$/.exec(value.trim());
  if (share) {
    const percent = Number(share[1]);
    if (!Number.isInteger(percent) || percent < 1 || percent > 99)
      throw new UsageError(
        `--canary ${value}: a share is a whole percentage from 1% to 99% of the connected devices`,
        "deploy",
      );
    return { percent };
  }
  if (value.endsWith("%") || value.trim() === "")
    throw new UsageError(`--canary ${value}: give a tag (kitchen) or a share of the devices (25%)`, "deploy");
  throw new UsageError(
    `--canary ${value}: "${value}" is not a valid tag (lowercase letters, digits, - and _), nor a share like 25%`,
    "deploy",
  );
}

const windowUnits: Record<string, number> = { "": 1, s: 1, m: 60, h: 3600 };

/** `--window 90`, `90s`, `5m`, `1h` → seconds. */
export function parseWindow(value: string): number {
  const match = /^(\d+)\s*([smh]?)$/.exec(value.trim().toLowerCase());
  const seconds = match ? Number(match[1]) * windowUnits[match[2]!]! : Number.NaN;
  if (
    !Number.isInteger(seconds) ||
    seconds < rolloutLimits.minWindowSeconds ||
    seconds > rolloutLimits.maxWindowSeconds
  )
    throw new UsageError(
      `--window ${value}: give seconds (90) or a number with a unit (90s, 5m, 1h), from 1 s to 24 h`,
      "deploy",
    );
  return seconds;
}

/** "kitchen" devices / 25 % of the devices. */
export function targetText(target: CanaryTarget | null): string {
  if (!target) return "every device";
  return "tag" in target ? `tag ${target.tag}` : `${target.percent}% of the connected devices`;
}

/** "4:05" / "0:09" / "1:02:03". */
export function clock(seconds: number): string {
  const s = Math.max(0, Math.ceil(seconds));
  const pad = (n: number) => String(n).padStart(2, "0");
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  return h ? `${h}:${pad(m)}:${pad(s % 60)}` : `${m}:${pad(s % 60)}`;
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** One side's figures: "2 devices, 14 calls, 0 failed" (+ disconnects / command errors when any). */
function healthText(h: RolloutHealth): string {
  const parts = [
    plural(h.devices, "device"),
    plural(h.calls, "call"),
    `${h.errors + h.timeouts} failed${h.timeouts ? ` (${plural(h.timeouts, "timeout")})` : ""}`,
  ];
  if (h.connectErrors) parts.push(`${h.connectErrors} of ${h.connects} onDeviceConnect threw`);
  if (h.disconnects) parts.push(plural(h.disconnects, "disconnect"));
  if (h.commands) parts.push(`${h.commandErrors} of ${plural(h.commands, "command")} failed`);
  return parts.join(", ");
}

/** The progress line while a canary runs, e.g. "canary v3: 2 devices, 5 calls, 0 failed · stable: … · 4:05 left". */
export function progressLine(deployment: Deployment, rollout: Rollout, now: number): string {
  const left = (new Date(rollout.endsAt).getTime() - now) / 1000;
  const when = left > 0 ? `${clock(left)} left` : "deciding";
  return `Canary v${deployment.version}: ${healthText(rollout.health.canary)} · stable: ${healthText(rollout.health.stable)} · ${when}`;
}

/**
 * Why a deployment was rolled back: the rollout's sentence, else the deployment's error, without a
 * leading "rolled back:" (the line that shows it says so already).
 */
export function rolledBackReason(deployment: Deployment): string {
  const reason = deployment.rollout?.reason ?? deployment.error ?? "(no reason given)";
  return reason.replace(/^rolled back:\s*/i, "");
}
