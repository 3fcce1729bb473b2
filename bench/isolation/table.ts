import type { Latency } from "../lib/measure.ts";

export interface CaseResult {
  case: string;
  /** Ticks sent in the measured window, and state events the watcher got for them. */
  offered: number;
  received: number;
  /** The measured project: device `tick` → script → stored → watcher. */
  message: Latency;
  health: Latency;
  healthRequests: number;
  /** The hostile project's owner deploys a fixed script: until the deploy answered, and until its state was visible. */
  redeployMs: number | null;
  liveMs: number | null;
  serverRssMaxBytes: number;
}

/** The results as the Markdown table in bench/README.md. */
export function printTable(results: CaseResult[]): void {
  const lines = [
    "| case | message→watcher p50 / p99 / max (ms) | received | /health p50 / p99 / max (ms) | redeploy answered / live (ms) | server RSS max (MiB) |",
    "|---|---|---|---|---|---|",
    ...results.map(
      (r) =>
        `| ${r.case === "none" ? "none (reference)" : r.case} | ${r.message.p50Ms} / ${r.message.p99Ms} / ${r.message.maxMs} | ${r.received}/${r.offered} | ${r.health.p50Ms} / ${r.health.p99Ms} / ${r.health.maxMs} | ${r.redeployMs ?? "–"} / ${r.liveMs ?? "–"} | ${Math.round(r.serverRssMaxBytes / 1048576)} |`,
    ),
  ];
  console.log(lines.join("\n"));
}
