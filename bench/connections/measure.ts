import { sleep } from "../lib/net.ts";
import type { Generator } from "./generator.ts";

export interface Spread {
  /** ms from the phase's start until 50 %, 90 %, 99 % and 100 % of the devices were welcomed. */
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  allMs: number;
}

/**
 * Polls the generator until `count` devices are online, each welcomed since the last mark (or
 * throws after `timeoutMs`), printing progress each second.
 */
export async function waitAllOnline(
  generator: Generator,
  count: number,
  timeoutMs: number,
  log: (line: string) => void,
): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  let lastLog = performance.now();
  for (;;) {
    const status = await generator.status();
    if (status.online >= count && status.welcomedSinceMark >= count) return;
    if (performance.now() > deadline) {
      const errors = Object.entries(status.errors)
        .sort((a, b) => b[1] - a[1])
        .slice(0, 5)
        .map(([m, n]) => `${n}× ${m}`);
      throw new Error(
        `only ${status.online}/${count} devices online after ${timeoutMs} ms; errors: ${errors.join("; ") || "none"}`,
      );
    }
    if (performance.now() - lastLog >= 1000) {
      lastLog = performance.now();
      log(
        `    online ${status.online}/${count}, welcomed this phase ${status.welcomedSinceMark}, dial attempts ${status.attempts}`,
      );
    }
    await sleep(25);
  }
}

/** When 50/90/99/100 % of `welcomes` (sorted wall-clock times) happened, counted from `from`. */
export function spread(welcomes: readonly number[], count: number, from: number): Spread {
  const at = (fraction: number) => {
    const t = welcomes[Math.max(0, Math.ceil(fraction * count) - 1)];
    if (t === undefined) throw new Error(`only ${welcomes.length} welcomes recorded for ${count} devices`);
    return Math.round(t - from);
  };
  return { p50Ms: at(0.5), p90Ms: at(0.9), p99Ms: at(0.99), allMs: at(1) };
}
