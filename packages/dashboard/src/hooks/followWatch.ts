import type { WatchHandle, WatchOptions } from "@sdk/client";
import { watchCloseCodes } from "@sdk/protocol";
import { isNotFound, isSessionEnded } from "../api.ts";

/** connecting → live; reconnecting after a drop; gone when the device was deleted or access lost. */
export type WatchState = "connecting" | "live" | "reconnecting" | "gone";

/**
 * The lifecycle both watch hooks share: `open` starts a client watch with the handlers given;
 * a snapshot means live, close code 4004 gone, and after a drop `stillThere` (a REST read) tells
 * whether retrying makes sense: a refused upgrade looks like a network drop (1006) to a browser.
 * Returns the stop function for the effect's clean-up.
 */
export function followWatch<E extends { type: string }>(
  open: (handlers: WatchOptions<E>) => WatchHandle,
  stillThere: () => Promise<unknown>,
  setState: (state: WatchState) => void,
  onEvent: (event: E) => void,
): () => void {
  setState("connecting");
  let stopped = false;
  const handle = open({
    onEvent: (event) => {
      if (event.type === "snapshot") setState("live");
      onEvent(event);
    },
    onClose: ({ code, willReconnect }) => {
      if (code === watchCloseCodes.gone) return setState("gone");
      if (!willReconnect || stopped) return;
      setState("reconnecting");
      stillThere().catch((error: unknown) => {
        if (stopped || !(isNotFound(error) || isSessionEnded(error))) return;
        stopped = true;
        handle.stop();
        setState("gone");
      });
    },
  });
  return () => {
    stopped = true;
    handle.stop();
  };
}
