import { bearerSubprotocolPrefix, type WatchEvent, watchSubprotocol } from "@sdk/protocol";

export interface WatchOptions {
  /** Called for every event: the snapshot first, then status, log, state and lagged events. */
  onEvent(event: WatchEvent): void;
  /** The socket closed (and will be reopened unless `stop()` was called or `reconnect` is false). */
  onClose?(info: { code: number; reason: string; willReconnect: boolean }): void;
  onOpen?(): void;
  /** Reopen after a drop, with backoff (default true). */
  reconnect?: boolean;
}

export interface WatchHandle {
  stop(): void;
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
  options: WatchOptions,
): WatchHandle {
  const url = `${baseUrl.replace(/^http/, "ws").replace(/\/+$/, "")}/v1/projects/${encodeURIComponent(ids.projectId)}/devices/${encodeURIComponent(ids.deviceId)}/watch`;
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
        options.onEvent(JSON.parse(String(message.data)) as WatchEvent);
      } catch {
        // not JSON: not from this server
      }
    };
    current.onclose = (event) => {
      // 4004: the device is gone; 4001: the credential was revoked. Retrying would not help.
      const willReconnect =
        !stopped && options.reconnect !== false && event.code !== 4004 && event.code !== 4001;
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
