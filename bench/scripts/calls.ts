import { Child } from "../lib/child.ts";
import type { CallsResult } from "./handler-calls.ts";
import type { Built } from "./project.ts";

/** Part 1 in a child process of its own (handler-calls.ts); resolves with its figures. */
export async function measureCalls(
  script: Built,
  tickScript: Built,
  seconds: number,
  track: (child: Child) => void,
): Promise<CallsResult> {
  const child = new Child({ name: "handler calls", script: "bench/scripts/handler-calls.ts" });
  track(child);
  try {
    await child.next("ready", 15_000);
    // 8 variants of 1.25 × seconds each, single calls (~5 s) and the memory part (a few seconds).
    return await child.request<CallsResult>(
      { type: "run", script, tickScript, seconds },
      "calls",
      seconds * 10_000 + 120_000,
    );
  } finally {
    await child.stop("SIGTERM", 5_000);
  }
}
