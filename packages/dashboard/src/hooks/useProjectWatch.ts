import { type ProjectWatchFilters, watchProject } from "@sdk/client";
import { type ProjectWatchEvent, watchCloseCodes } from "@sdk/protocol";
import { useEffect, useRef, useState } from "react";
import { api, isNotFound, isSessionEnded } from "../api.ts";
import type { WatchState } from "./useDeviceWatch.ts";

/**
 * Opens the project watch WebSocket (every device of the project, devices added later included)
 * with the session cookie while the component is shown, and hands every event to `onEvent`.
 * Reconnects with backoff after a drop; each reconnect starts with a fresh snapshot.
 */
export function useProjectWatch(
  projectId: string,
  filters: ProjectWatchFilters,
  onEvent: (event: ProjectWatchEvent) => void,
): WatchState {
  const [state, setState] = useState<WatchState>("connecting");
  const handler = useRef(onEvent);
  handler.current = onEvent;

  useEffect(() => {
    setState("connecting");
    let stopped = false;
    const handle = watchProject(location.origin, undefined, projectId, {
      ...filters,
      onEvent: (event) => {
        if (event.type === "snapshot") setState("live");
        handler.current(event);
      },
      onClose: ({ code, willReconnect }) => {
        if (code === watchCloseCodes.gone) return setState("gone");
        if (!willReconnect || stopped) return;
        setState("reconnecting");
        // A refused upgrade (project deleted, session over) looks like a network drop to a browser
        // (close code 1006): ask the REST API whether retrying makes sense.
        api.getProject({ params: { projectId } }).catch((error: unknown) => {
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
  }, [projectId, filters.devices?.join(), filters.events?.join()]);

  return state;
}
