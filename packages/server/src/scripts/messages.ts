import type { LogLevel } from "@sdk/protocol";
import type { SandboxLimits } from "@sdk/sandbox";

/** What the main thread asks of a script worker (posted in batches: one array per turn of the event loop). */
export type ToWorker =
  | {
      t: "load";
      id: number;
      projectId: string;
      bundle: string;
      sourceMap?: string;
      env: Record<string, string>;
      limits: Partial<SandboxLimits>;
      docsBaseUrl: string;
      /** Output items (emitState, log, send) that may wait for the main thread at once. */
      maxOutput: number;
    }
  | { t: "attach"; id: number; deviceId: string; board: string }
  | { t: "detach"; id: number; deviceId: string }
  | { t: "deliver"; id: number; deviceId: string; message: Record<string, unknown> }
  | { t: "env"; id: number; env: Record<string, string> }
  | { t: "dispose"; id: number }
  /** Answered with `synced` once everything posted before it has run. */
  | { t: "sync"; id: number; req: number }
  | { t: "result"; cmd: number; ok: boolean; value: unknown }
  /** The main thread is done with `n` output items of the sandbox (stored, or dropped). */
  | { t: "ack"; id: number; n: number };

/** What a script worker tells the main thread (also batched). */
export type FromWorker =
  | { t: "loaded"; id: number; error?: { load: boolean; message: string } }
  | { t: "emit"; id: number; deviceId: string; entityId: string; value: unknown }
  | { t: "send"; id: number; deviceId: string; message: Record<string, unknown> }
  | { t: "log"; id: number; deviceId: string; level: LogLevel; message: string }
  /** `entry`: the entry point that failed (health checks tell onDeviceConnect's failures apart). */
  | { t: "failed"; id: number; deviceId: string; kind: "error" | "timeout"; entry?: string }
  /** Entries into the sandbox since the last batch: calls (onDeviceConnect, onMessage, timers, command results), of which `connects`. */
  | { t: "entered"; id: number; calls: number; connects: number }
  | { t: "command"; id: number; cmd: number; deviceId: string; type: string; args: Record<string, unknown> }
  | { t: "fault"; id: number; reason: string }
  | { t: "throttled"; id: number }
  | { t: "delivered"; id: number; n: number }
  /** Output items the worker dropped because `maxOutput` were already waiting. */
  | { t: "dropped"; id: number; deviceId: string; n: number }
  | { t: "synced"; id: number; req: number; fault: string | null }
  /** The device's instance is gone (its onDeviceDisconnect ran): it makes no more output. */
  | { t: "detached"; id: number; deviceId: string }
  /** The sandbox is gone from the worker: everything it made has been posted before this; `lost` device messages never ran. */
  | { t: "disposed"; id: number; lost: number };
