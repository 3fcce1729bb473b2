import type { Deployment } from "@sdk/protocol";
import { useEffect, useRef } from "react";
import { api } from "../../api.ts";
import type { LoadResult } from "../../hooks/useLoad.ts";

/** How often the deployments are read again while a canary is in its window. */
const canaryPollMs = 2_000;
/** Otherwise, now and then: a canary started elsewhere (`sdk deploy --canary`) shows up. */
const backgroundPollMs = 15_000;

/**
 * Keeps the deployments fresh: every 2 s while a canary runs (its figures and time left change,
 * and the server decides by itself), every 15 s otherwise and when the tab is shown again. One
 * read at a time (the next is planned once one finished); a failed read keeps what is shown. When
 * the canary is decided or the live deployment changes, `onDecided` runs.
 */
export function useCanaryRefresh(
  projectId: string,
  deployments: LoadResult<Deployment[]>,
  onDecided: () => void,
): void {
  const running = deployments.data?.find((d) => d.status === "canary")?.id ?? null;
  const live = deployments.data?.find((d) => d.status === "active")?.id ?? null;
  const ready = deployments.status === "ready";
  const setData = useRef(deployments.setData);
  setData.current = deployments.setData;
  const decided = useRef(onDecided);
  decided.current = onDecided;
  const seen = useRef<{ running: string | null; live: string | null }>({ running: null, live: null });

  useEffect(() => {
    if (!ready) return;
    const before = seen.current;
    seen.current = { running, live };
    if ((before.running && before.running !== running) || (before.live && before.live !== live))
      decided.current();
  }, [ready, running, live]);

  useEffect(() => {
    if (!ready) return;
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let reading = false;
    const read = async () => {
      clearTimeout(timer);
      if (reading) return;
      reading = true;
      try {
        const list = await api.listDeployments({ params: { projectId } });
        if (!stopped) setData.current(list);
      } catch {
        // Keep the last figures; the next read may work.
      } finally {
        reading = false;
      }
      if (!stopped) timer = setTimeout(read, running ? canaryPollMs : backgroundPollMs);
    };
    timer = setTimeout(read, running ? canaryPollMs : backgroundPollMs);
    const shown = () => {
      if (document.visibilityState === "visible") void read();
    };
    document.addEventListener("visibilitychange", shown);
    window.addEventListener("focus", shown);
    return () => {
      stopped = true;
      clearTimeout(timer);
      document.removeEventListener("visibilitychange", shown);
      window.removeEventListener("focus", shown);
    };
  }, [projectId, ready, running]);
}
