import { deviceCloseCodes, watchCloseCodes } from "@sdk/protocol";
import type { FastifyBaseLogger } from "fastify";
import type { WebSocket } from "ws";
import type { Unsubscribe } from "../events/bus.ts";
import { type Principal, revokes } from "../services/auth.ts";
import type { Services } from "../services/index.ts";
import type { Heartbeat } from "./heartbeat.ts";

/** Past this many bytes waiting to be sent, events are dropped and a `lagged` notice follows. */
const watchBufferLimitBytes = 256 * 1024;
/** A watcher that misses this many events in a row is closed (4008). */
const watchMaxDropped = 10_000;

/**
 * The close of a resync (docs/protocol.md, close codes of the watch socket): 1012, service
 * restart, which every client (client library, CLI, dashboard) reconnects after.
 */
const resyncCloseCode = deviceCloseCodes.serviceRestart;

/** A frame before the stream numbers it. */
type Frame = { type: string; at: string };

export interface WatchSource<E> {
  /** Starts hearing the bus; events that come while the snapshot is read are held back. */
  subscribe(handler: (event: E) => void): Unsubscribe;
  /** The frame for an event (undefined: nothing to send), or a close of the stream. */
  toFrame(event: E): Frame | { close: number; reason: string } | undefined;
  snapshot(): Promise<Frame>;
  /** Why the stream closes when the snapshot cannot be read. */
  snapshotFailed: string;
}

/**
 * One watcher's stream, the same for the device and the project watch sockets: the snapshot as
 * seq 1, held-back events right after it, `seq` without gaps, dropping past the buffer limit with a
 * `lagged` notice before the next event sent, 4008 after too many drops, the heartbeat, and 4001
 * when the credential it authenticated with is revoked.
 */
export function serveWatcher<E>(
  socket: WebSocket,
  watcher: { principal: Principal; services: Services; heartbeat: Heartbeat; log: FastifyBaseLogger },
  source: WatchSource<E>,
): void {
  let seq = 0;
  let dropped = 0;
  let ready = false;
  const early: E[] = [];

  const sendNow = (frame: Frame) => socket.send(JSON.stringify({ ...frame, seq: ++seq }));
  const deliver = (event: E) => {
    if (socket.readyState !== socket.OPEN) return;
    const frame = source.toFrame(event);
    if (!frame) return;
    if ("close" in frame) return socket.close(frame.close, frame.reason);
    if (socket.bufferedAmount > watchBufferLimitBytes) {
      dropped++;
      if (dropped >= watchMaxDropped) socket.close(watchCloseCodes.tooSlow, "watcher too slow");
      return;
    }
    if (dropped > 0) {
      sendNow({ type: "lagged", at: new Date().toISOString(), dropped } as Frame);
      dropped = 0;
    }
    sendNow(frame);
  };

  const unsubscribe = source.subscribe((event) => {
    if (ready) deliver(event);
    else early.push(event);
  });
  // A revoked token, an ended session or lost access ends the stream too.
  const unwatchRevocations = watcher.services.watch.onRevoked((revocation) => {
    if (revokes(revocation, watcher.principal)) socket.close(watchCloseCodes.revoked, "credentials revoked");
  });
  // A resync (this instance of a cluster may have missed events): the client comes back for a
  // fresh snapshot, its credentials checked again.
  const unwatchResync = watcher.services.watch.onResync(() =>
    socket.close(resyncCloseCode, "server resynchronising; reconnect for a fresh snapshot"),
  );
  watcher.heartbeat.track(socket, () => {});
  socket.on("close", () => {
    unsubscribe();
    unwatchRevocations();
    unwatchResync();
    early.length = 0;
  });
  socket.on("message", () => {}); // watchers have nothing to say; frames only count as signs of life

  // The subscription hears every instance before the snapshot is read: nothing falls in between.
  watcher.services.watch
    .ready()
    .then(() => source.snapshot())
    .then(
      (snapshot) => {
        if (socket.readyState !== socket.OPEN) return;
        sendNow(snapshot);
        ready = true;
        for (const event of early.splice(0)) deliver(event);
      },
      (error: unknown) => {
        watcher.log.warn({ err: error }, "watch snapshot failed");
        socket.close(watchCloseCodes.gone, source.snapshotFailed);
      },
    );
}
