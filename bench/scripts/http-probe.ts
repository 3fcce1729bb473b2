import { type Latency, latency } from "../lib/measure.ts";
import { sleep } from "../lib/net.ts";

export interface HttpProbeResult {
  requests: number;
  /** Not answered 2xx, or not within 10 s. */
  failed: number;
  /** Of the answered ones, request sent → body read. */
  latency: Latency;
}

/**
 * While a step runs, the REST API asked as a dashboard or `sdk` would: `paths` in turn, one request
 * at a time, `perSecond` at most. What it shows is how long HTTP waits behind the message load on
 * the server's main thread (the device sockets, the commits that run there, the watchers).
 */
export function startHttpProbe(
  baseUrl: string,
  paths: readonly string[],
  token: string,
  perSecond = 20,
): { stop(): Promise<HttpProbeResult> } {
  const times: number[] = [];
  let failed = 0;
  let running = true;
  const loop = (async () => {
    for (let i = 0; running; i++) {
      const started = performance.now();
      try {
        const res = await fetch(`${baseUrl}${paths[i % paths.length]}`, {
          headers: { authorization: `Bearer ${token}` },
          signal: AbortSignal.timeout(10_000),
        });
        await res.arrayBuffer();
        if (res.ok) times.push(performance.now() - started);
        else failed++;
      } catch {
        failed++;
      }
      const wait = 1000 / perSecond - (performance.now() - started);
      if (wait > 0 && running) await sleep(wait);
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return {
        requests: times.length + failed,
        failed,
        latency: latency(
          times.sort((a, b) => a - b),
          2,
        ),
      };
    },
  };
}
