import type { WebSocket } from "ws";
import type { Lifecycle } from "../lifecycle/lifecycle.ts";

/** Something that handles a socket's frames: a paused socket whose count grows is making progress. */
export interface HeartbeatProgress {
  readonly handled: number;
}

/** What the heartbeat keeps per socket. A connection object may be its own entry (one object, not two). */
export interface HeartbeatEntry {
  alive: boolean;
  missed: number;
  /** Ticks in a row at which the socket was paused and its `handled` count had not grown. */
  stalled: number;
  /** `progress.handled` at the last tick. */
  handled: number;
  readonly progress: HeartbeatProgress | undefined;
  /** Learns why before the socket is terminated. */
  dead(reason: string): void;
}

/** A paused socket that makes no progress for this many intervals loses its exemption. */
const maxStalledTicks = 2;

/**
 * One timer pings every open socket each interval. A socket that misses two pongs in a row is
 * terminated (its close handler then runs as for any other close). Any frame from the peer counts
 * (and a ping from the peer) as a sign of life too. A socket we paused (its frames wait to be
 * handled) cannot have its pongs read, so it counts as alive while its frames are being handled;
 * paused for two intervals without one frame handled, it is terminated.
 */
export class Heartbeat implements Lifecycle {
  readonly name = "heartbeat";
  readonly #sockets = new Map<WebSocket, HeartbeatEntry>();
  readonly #intervalMs: number;
  // One listener of each kind for every socket (`this` is the socket), not closures per socket.
  readonly #alive: (this: WebSocket) => void;
  readonly #gone: (this: WebSocket) => void;
  #timer: NodeJS.Timeout | undefined;

  constructor(intervalSeconds: number) {
    this.#intervalMs = intervalSeconds * 1000;
    const sockets = this.#sockets;
    this.#alive = function (this: WebSocket) {
      const entry = sockets.get(this);
      if (entry) entry.alive = true;
    };
    this.#gone = function (this: WebSocket) {
      sockets.delete(this);
    };
  }

  start(): void {
    this.#timer ??= setInterval(() => this.#tick(), this.#intervalMs);
    this.#timer.unref();
  }

  /** `onDead` learns why before the socket is terminated. */
  track(socket: WebSocket, onDead: (reason: string) => void, progress?: HeartbeatProgress): void {
    this.trackEntry(socket, { alive: true, missed: 0, stalled: 0, handled: 0, progress, dead: onDead });
  }

  /** As `track`, with the caller's object as the socket's entry (its counters start at 0, alive). */
  trackEntry(socket: WebSocket, entry: HeartbeatEntry): void {
    this.#sockets.set(socket, entry);
    socket.on("pong", this.#alive);
    socket.on("ping", this.#alive); // a device that pings the server is alive too
    socket.on("message", this.#alive);
    socket.on("close", this.#gone); // not once(): its wrapper would be another closure per socket
  }

  #tick(): void {
    for (const [socket, entry] of this.#sockets) {
      if (socket.isPaused) {
        const handled = entry.progress?.handled ?? 0;
        entry.stalled = handled === entry.handled ? entry.stalled + 1 : 0;
        entry.handled = handled;
        if (entry.stalled > maxStalledTicks) {
          const seconds = Math.round((maxStalledTicks * this.#intervalMs) / 1000);
          this.#terminate(socket, entry, `paused ${seconds}s without progress`);
          continue;
        }
        entry.alive = true; // its pongs cannot be read, yet its frames are being handled
      } else entry.stalled = 0;
      entry.missed = entry.alive ? 0 : entry.missed + 1;
      if (entry.missed >= 2) {
        this.#terminate(socket, entry, "heartbeat timeout");
        continue;
      }
      entry.alive = false;
      try {
        socket.ping();
      } catch {
        // the socket is closing; its close handler cleans up
      }
    }
  }

  #terminate(socket: WebSocket, entry: HeartbeatEntry, reason: string): void {
    this.#sockets.delete(socket);
    entry.dead(reason);
    socket.terminate();
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }
}
