import type { GuestEntryName } from "@sdk/device/abi";
import type { LogLevel } from "@sdk/protocol";

/** What a sandbox needs from the server. */
export interface SandboxHost {
  /** Sends a device command; resolves with the result or rejects with `{ code, message }`. */
  command(deviceId: string, type: string, args: Record<string, unknown>): Promise<unknown>;
  emitState(deviceId: string, entityId: string, value: unknown): void;
  send(deviceId: string, message: Record<string, unknown>): void;
  log(deviceId: string, level: LogLevel, message: string): void;
  /**
   * An entry into the guest ended in an uncaught error or a `Script execution timeout` (called
   * after the line is logged): what alerts and health checks count. `entry`: the entry point that
   * failed (a handler error the script's runtime caught and reported counts too).
   */
  failed?(deviceId: string, kind: "error" | "timeout", entry?: GuestEntryName): void;
  /** An entry into the guest started (`deviceId` null for an entry of the whole project): health checks count calls. */
  entered?(deviceId: string | null, entry: GuestEntryName): void;
}
