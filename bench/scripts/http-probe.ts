import { type Latency, latency } from "../lib/measure.ts";
import { sleep } from "../lib/net.ts";

export interface HttpPathResult {
  path: string;
  requests: number;
  /** Not answered 2xx, or not within 10 s. */
  failed: number;
  /** Of the answered ones, request sent → body read. */
  latency: Latency;
}

/**
 * While a step runs, the REST API asked as a dashboard or `sdk` would: `paths` in turn, one request
 * at a time, `perSecond` at most. What it shows is how long HTTP waits behind the message load: on
 * the server's main thread (device sockets, watchers, commits that run there), and for a read of
 * device state, the commit under way (reads wait for the writes queued before them).
 */
export function startHttpProbe(
  baseUrl: string,
  paths: readonly string[],
  token: string,
  perSecond = 20,
): { stop(): Promise<HttpPathResult[]> } {
  const times = paths.map(() => [] as number[]);
  const failed = paths.map(() => 0);
  let running = true;
  const loop = (async () => {
    for (let i = 0; running; i++) {
      const which = i % paths.length;
      const started = performance.now();
      try {
        const res = await fetch(`${baseUrl}${paths[which]}`, {
          headers: { authorization: `Bearer ${token}` },
          signal: AbortSignal.timeout(10_000),
        });
        await res.arrayBuffer();
        if (res.ok) times[which]!.push(performance.now() - started);
        else failed[which]!++;
      } catch {
        failed[which]!++;
      }
      const wait = 1000 / perSecond - (performance.now() - started);
      if (wait > 0 && running) await sleep(wait);
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return paths.map((path, i) => ({
        path,
        requests: times[i]!.length + failed[i]!,
        failed: failed[i]!,
        latency: latency(
          times[i]!.sort((a, b) => a - b),
          2,
        ),
      }));
    },
  };
}
