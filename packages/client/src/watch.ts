import {
  bearerSubprotocolPrefix,
  type ProjectWatchEvent,
  type ProjectWatchKind,
  type WatchEvent,
  watchCloseCodes,
  watchSubprotocol,
} from "@sdk/protocol";

export interface WatchOptions<E = WatchEvent> {
  /** Called for every event: the snapshot first, then status, log, state and lagged events. */
  onEvent(event: E): void;
  /** The socket closed (and will be reopened unless `stop()` was called or `reconnect` is false). */
  onClose?(info: { code: number; reason: string; willReconnect: boolean }): void;
  onOpen?(): void;
  /** Reopen after a drop, with backoff (default true). */
  reconnect?: boolean;
}

export interface WatchHandle {
  stop(): void;
}

/** Opens a watch socket and reopens it after a drop, with backoff; each open starts with a snapshot. */
function openWatch<E>(baseUrl: string, path: string, token: string | undefined, options: WatchOptions<E>) {
  const url = `${baseUrl.replace(/^http/, "ws").replace(/\/+$/, "")}${path}`;
  const protocols = token ? [watchSubprotocol, `${bearerSubprotocolPrefix}${token}`] : [watchSubprotocol];
  let stopped = false;
  let socket: WebSocket | undefined;
  let attempt = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;

  const open = () => {
    const current = new WebSocket(url, protocols);
    socket = current;
    current.onopen = () => {
      // stop() came while connecting: closing a connecting socket aborts it with a warning.
      if (stopped) return current.close(1000);
      attempt = 0;
      options.onOpen?.();
    };
    current.onmessage = (message) => {
      if (stopped) return;
      try {
        options.onEvent(JSON.parse(String(message.data)) as E);
      } catch {
        // not JSON: not from this server
      }
    };
    current.onclose = (event) => {
      // gone: the device or project was deleted; revoked: the credential was. Retrying would not help.
      const willReconnect =
        !stopped &&
        options.reconnect !== false &&
        event.code !== watchCloseCodes.gone &&
        event.code !== watchCloseCodes.revoked;
      options.onClose?.({ code: event.code, reason: event.reason, willReconnect });
      if (!willReconnect) return;
      const delay = Math.min(30_000, 500 * 2 ** attempt++) * (0.5 + Math.random() / 2);
      timer = setTimeout(open, delay);
    };
  };
  open();
  return {
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      // A connecting socket is closed by its onopen.
      if (socket?.readyState === WebSocket.OPEN) socket.close(1000);
    },
  };
}

/**
 * Watches one device over `/v1/projects/:projectId/devices/:deviceId/watch` with the platform's
 * WebSocket (browsers and Node 22+). An API token travels as the `bearer.<token>` sub-protocol;
 * without one a browser's session cookie is used.
 */
export function watchDevice(
  baseUrl: string,
  token: string | undefined,
  ids: { projectId: string; deviceId: string },
  options: WatchOptions & {
    /** Also receive `pins` events (by default only status, log and state, as the spec says). */
    pins?: boolean;
    /** Also receive `message`, `command` and `send` events: what a recording needs (`sdk record`). */
    record?: boolean;
  },
): WatchHandle {
  const query = new URLSearchParams();
  if (options.pins) query.set("pins", "true");
  if (options.record) query.set("record", "true");
  const search = query.size > 0 ? `?${query}` : "";
  const path = `/v1/projects/${encodeURIComponent(ids.projectId)}/devices/${encodeURIComponent(ids.deviceId)}/watch${search}`;
  return openWatch(baseUrl, path, token, options);
}

/** Which devices and event kinds a project watch carries (default: every device, every kind). */
export interface ProjectWatchFilters {
  devices?: string[];
  events?: ProjectWatchKind[];
  /** Only devices with at least one of these tags; the stream follows tag changes (`device_tags`). */
  tags?: string[];
}

/**
 * Watches every device of a project over `/v1/projects/:projectId/watch`, devices created later
 * included (`device_created`, then their events). Authenticates and reconnects like `watchDevice`.
 */
export function watchProject(
  baseUrl: string,
  token: string | undefined,
  projectId: string,
  options: WatchOptions<ProjectWatchEvent> & ProjectWatchFilters,
): WatchHandle {
  const query = new URLSearchParams();
  if (options.devices) query.set("devices", options.devices.join(","));
  if (options.events) query.set("events", options.events.join(","));
  if (options.tags) query.set("tags", options.tags.join(","));
  const search = query.size > 0 ? `?${query}` : "";
  return openWatch(baseUrl, `/v1/projects/${encodeURIComponent(projectId)}/watch${search}`, token, options);
}
