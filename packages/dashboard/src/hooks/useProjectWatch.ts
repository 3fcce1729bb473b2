import { type ProjectWatchFilters, watchProject } from "@sdk/client";
import type { ProjectWatchEvent } from "@sdk/protocol";
import { useEffect, useRef, useState } from "react";
import { api } from "../api.ts";
import { followWatch, type WatchState } from "./followWatch.ts";

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

  useEffect(
    () =>
      followWatch<ProjectWatchEvent>(
        (handlers) => watchProject(location.origin, undefined, projectId, { ...filters, ...handlers }),
        () => api.getProject({ params: { projectId } }),
        setState,
        (event) => handler.current(event),
      ),
    [projectId, filters.devices?.join(), filters.events?.join()],
  );

  return state;
}
