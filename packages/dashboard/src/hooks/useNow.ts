import { useSyncExternalStore } from "react";

// One shared ticking clock for every "3 minutes ago" on the page.
let now = Date.now();
const listeners = new Set<() => void>();
let timer: ReturnType<typeof setInterval> | undefined;

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  timer ??= setInterval(() => {
    now = Date.now();
    for (const l of listeners) l();
  }, 10_000);
  return () => {
    listeners.delete(listener);
    if (listeners.size === 0 && timer) {
      clearInterval(timer);
      timer = undefined;
    }
  };
}

/** The time in ms, updated every 10 seconds. */
export function useNow(): number {
  return useSyncExternalStore(subscribe, () => now);
}
