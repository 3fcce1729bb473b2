import { watchDevice } from "@sdk/client";
import type { WatchEvent } from "@sdk/protocol";
import { useEffect, useRef, useState } from "react";
import { api } from "../api.ts";
import { followWatch, type WatchState } from "./followWatch.ts";

export type { WatchState } from "./followWatch.ts";

/**
 * Opens the watch WebSocket for one device (with the session cookie) while the component is
 * shown and `enabled`, and hands every event to `onEvent`. Reconnects with backoff after a drop.
 * `pins: true` asks for `pins` events as well (the socket sends status, log and state by default).
 */
export function useDeviceWatch(
  projectId: string,
  deviceId: string,
  onEvent: (event: WatchEvent) => void,
  enabled = true,
  options: { pins?: boolean } = {},
): WatchState {
  const [state, setState] = useState<WatchState>("connecting");
  const handler = useRef(onEvent);
  handler.current = onEvent;
  const pins = options.pins === true;

  useEffect(() => {
    if (!enabled) return;
    return followWatch<WatchEvent>(
      (handlers) => watchDevice(location.origin, undefined, { projectId, deviceId }, { ...handlers, pins }),
      () => api.getDevice({ params: { projectId, deviceId } }),
      setState,
      (event) => handler.current(event),
    );
  }, [projectId, deviceId, enabled, pins]);

  return state;
}
