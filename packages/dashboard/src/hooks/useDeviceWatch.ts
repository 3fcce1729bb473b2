import { watchDevice } from "@sdk/client";
import { type WatchEvent, watchCloseCodes } from "@sdk/protocol";
import { useEffect, useRef, useState } from "react";
import { api, isNotFound, isSessionEnded } from "../api.ts";

/** connecting → live; reconnecting after a drop; gone when the device was deleted or access lost. */
export type WatchState = "connecting" | "live" | "reconnecting" | "gone";

/**
 * Opens the watch WebSocket for one device (with the session cookie) while the component is
 * shown and `enabled`, and hands every event to `onEvent`. Reconnects with backoff after a drop.
 */
export function useDeviceWatch(
  projectId: string,
  deviceId: string,
  onEvent: (event: WatchEvent) => void,
  enabled = true,
): WatchState {
  const [state, setState] = useState<WatchState>("connecting");
  const handler = useRef(onEvent);
  handler.current = onEvent;

  useEffect(() => {
    if (!enabled) return;
    setState("connecting");
    let stopped = false;
    const handle = watchDevice(
      location.origin,
      undefined,
      { projectId, deviceId },
      {
        onEvent: (event) => {
          if (event.type === "snapshot") setState("live");
          handler.current(event);
        },
        onClose: ({ code, willReconnect }) => {
          if (code === watchCloseCodes.gone) return setState("gone");
          if (!willReconnect || stopped) return;
          setState("reconnecting");
          // A refused upgrade (device deleted, session over) looks like a network drop to a browser
          // (close code 1006): ask the REST API whether retrying makes sense.
          api.getDevice({ params: { projectId, deviceId } }).catch((error: unknown) => {
            if (stopped || !(isNotFound(error) || isSessionEnded(error))) return;
            stopped = true;
            handle.stop();
            setState("gone");
          });
        },
      },
    );
    return () => {
      stopped = true;
      handle.stop();
    };
  }, [projectId, deviceId, enabled]);

  return state;
}
