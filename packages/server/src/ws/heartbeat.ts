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
  #timer: NodeJS.Timeout | undefined;

  constructor(intervalSeconds: number) {
    this.#intervalMs = intervalSeconds * 1000;
  }

  start(): void {
    this.#timer ??= setInterval(() => this.#tick(), this.#intervalMs);
    this.#timer.unref();
  }

  track(socket: WebSocket, onDead: () => void): void {
    const entry: Tracked = { alive: true, missed: 0, onDead };
    this.#sockets.set(socket, entry);
    const alive = () => {
      entry.alive = true;
    };
    socket.on("pong", alive);
    socket.on("ping", alive); // a device that pings the server is alive too
    socket.on("message", alive);
    socket.once("close", () => this.#sockets.delete(socket));
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
