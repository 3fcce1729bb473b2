/** The IPC messages between run.ts and its generator workers (fleet-worker.ts). */
import type { Credentials } from "../lib/provision.ts";

export type ToWorker =
  | { type: "start"; server: string; devices: Credentials[]; concurrency: number }
  /** Forget the welcome times and errors recorded so far (a phase starts). */
  | { type: "mark" }
  | { type: "status" }
  | { type: "timeline" }
  | { type: "stop" };

export interface WorkerStatus {
  type: "status";
  /** Devices between welcome and the end of that connection. */
  online: number;
  /** Dial attempts (first ones and reconnects). */
  attempts: number;
  welcomes: number;
  /** Devices welcomed at least once since the last mark. */
  welcomedSinceMark: number;
  disconnects: number;
  /** Error messages seen since the last mark, with how often. */
  errors: Record<string, number>;
}

export type FromWorker =
  | { type: "ready" }
  | {
      type: "started";
      /** When the first device dialled (wall clock, ms). */
      firstDialAt: number;
      connected: number;
      failed: number;
      elapsedMs: number;
    }
  | WorkerStatus
  /** Since the last mark, per device's first welcome: its time and its dial's (wall clock, ms). */
  | { type: "timeline"; welcomes: number[]; dialed: number[] }
  | { type: "stopped" };
