/** The IPC messages between run.ts and the load generator (load-worker.ts). */
import type { Latency } from "../lib/measure.ts";
import type { Credentials } from "../lib/provision.ts";

export type ToLoad =
  | {
      type: "connect";
      /** `host:port` the devices dial. */
      server: string;
      /** `host:port` the watch sockets dial (another instance of a cluster, or `server`). */
      watchServer: string;
      projectId: string;
      /** An API token for the watch sockets (the reference ignores it). */
      token: string;
      devices: Credentials[];
      /** The first `watch` devices get a watch socket. */
      watch: number;
      /** Handshakes in flight at once. */
      concurrency: number;
    }
  /** Each device sends one tick; resolves when every watched one came back (or after `timeoutMs`). */
  | { type: "warmUp"; timeoutMs: number }
  | { type: "step"; rate: number; seconds: number; drainMs: number }
  | { type: "disconnect" }
  | { type: "stop" };

export interface Connected {
  type: "connected";
  /** From the first dial to the last welcome. */
  devicesMs: number;
  /** From the first watch dial to the last snapshot. */
  watchersMs: number;
  watched: number;
}

export interface WarmedUp {
  type: "warmedUp";
  ms: number;
  /** Watched devices whose tick did not come back in time. */
  missing: number;
}

/** One step at a fixed offered rate, as the generator saw it. */
export interface LoadStep {
  type: "stepDone";
  offeredPerSecond: number;
  seconds: number;
  /** The seq of the step's first message (message k has seq firstSeq + k, its state value). */
  firstSeq: number;
  /** Messages sent (all devices), and from the first to the last send. */
  sent: number;
  sendMs: number;
  /** Messages sent to watched devices: the ones measured. */
  measured: number;
  /** Their state events that reached the watcher (each seq counted once). */
  received: number;
  /** Events the server reported as dropped (`lagged`) to a slow watcher. */
  lagged: number;
  /** From the first send until the last measured event arrived (or the drain ran out). */
  spanMs: number;
  /** received / spanMs. */
  achievedPerSecond: number;
  /** From sending a message until its state event reached the watcher. */
  latency: Latency;
  /**
   * The same for the messages sent after the step's first second: the rate at which the load
   * starts (from idle to the offered rate at once) left out, what a server under that load sees.
   */
  latencySteady: Latency;
  /** How late the generator sent, against the schedule of the offered rate (it kept up when small). */
  sendLag: Latency;
  /** Error frames from the server, device sockets and watch sockets closed, during the step. */
  serverErrors: number;
  closed: number;
  watchersClosed: number;
}

export type FromLoad =
  | { type: "ready" }
  | Connected
  | WarmedUp
  | LoadStep
  | { type: "disconnected" }
  | { type: "stopped" };
