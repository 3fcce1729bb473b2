import type { WebSocket } from "ws";
import type { Lifecycle } from "../lifecycle/lifecycle.ts";

interface Tracked {
  alive: boolean;
  missed: number;
  onDead: () => void;
}

/**
 * One timer pings every open socket each interval. A socket that misses two pongs in a row is
 * terminated (its close handler then runs as for any other close). Any frame from the peer counts
 * (and a ping from the peer) as a sign of life too.
 */
export class Heartbeat implements Lifecycle {
  readonly name = "heartbeat";
  readonly #sockets = new Map<WebSocket, Tracked>();
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

  track(socket: WebSocket, onDead: () => void): void {
    this.#sockets.set(socket, { alive: true, missed: 0, onDead });
    socket.on("pong", this.#alive);
    socket.on("ping", this.#alive); // a device that pings the server is alive too
    socket.on("message", this.#alive);
    socket.on("close", this.#gone); // not once(): its wrapper would be another closure per socket
  }

  #tick(): void {
    for (const [socket, entry] of this.#sockets) {
      // Paused by us (its frames wait to be handled): its pongs cannot be read, yet it is alive.
      if (socket.isPaused) entry.alive = true;
      entry.missed = entry.alive ? 0 : entry.missed + 1;
      if (entry.missed >= 2) {
        this.#sockets.delete(socket);
        entry.onDead();
        socket.terminate();
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

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }
}
