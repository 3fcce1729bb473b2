import type { Deployment } from "@sdk/protocol";
import { useEffect, useRef } from "react";
import type { LoadResult } from "../../hooks/useLoad.ts";

/** How often the deployments are read again while a canary is in its window. */
const canaryPollMs = 2_000;

/**
 * While a canary runs, reloads the deployments every 2 s (its figures and time left change, and the
 * server decides by itself); once it is decided, `onDecided` runs (the live version may have changed).
 */
export function useCanaryRefresh(deployments: LoadResult<Deployment[]>, onDecided: () => void): void {
  const running = deployments.data?.find((d) => d.status === "canary")?.id ?? null;
  const reload = useRef(deployments.reload);
  reload.current = deployments.reload;
  const decided = useRef(onDecided);
  decided.current = onDecided;
  const seen = useRef<string | null>(null);

  useEffect(() => {
    if (seen.current && seen.current !== running) decided.current();
    seen.current = running;
    if (!running) return;
    const timer = setInterval(() => void reload.current(), canaryPollMs);
    return () => clearInterval(timer);
  }, [running]);
}
