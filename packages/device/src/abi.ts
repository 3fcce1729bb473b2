// The guest ABI: the one contract between the guest runtime (./runtime.ts, inside QuickJS) and the
// sandbox that runs it (@sdk/sandbox, in Node). Only strings, numbers and booleans cross it; objects
// travel as JSON text. It imports only types of @sdk/protocol, so both sides can depend on it.
import type { LogLevel } from "@sdk/protocol/hardware";

/** The global the sandbox sets before the bundle runs; the runtime takes it off before user code runs. */
export const guestHostGlobal = "__sdk_host";

/** The functions the sandbox provides to the guest as `globalThis[guestHostGlobal]` (all synchronous). */
export interface GuestHostFunctions {
  /** Sends a device command; the sandbox answers later through the `settle` entry point. */
  command(deviceId: string, commandId: number, type: string, argsJson: string): void;
  emitState(deviceId: string, entityId: string, valueJson: string): void;
  send(deviceId: string, messageJson: string): void;
  log(deviceId: string, level: LogLevel, text: string): void;
  /** An error escaped a handler: `stack` is mapped to the TypeScript source by the host. */
  error(deviceId: string, stack: string): void;
  /** The sandbox calls the `fire` entry point after `delayMs`, once or (with `repeat`) until cleared. */
  setTimer(deviceId: string, timerId: number, delayMs: number, repeat: boolean): void;
  clearTimer(deviceId: string, timerId: number): void;
}

/** What the guest finds at `globalThis[guestHostGlobal]`. */
export interface GuestHost extends GuestHostFunctions {
  /**
   * The server's base URL (`https://sdk.example.com`), which makes `SdkError.docs` absolute;
   * empty when the sandbox does not know it.
   */
  readonly docsBaseUrl: string;
}

export type GuestHostFunctionName = keyof GuestHostFunctions;

/** The entry points the bundle exports by default (`createRuntime(Script)`); each names its device. */
export interface GuestEntryPoints {
  create(deviceId: string, projectId: string, board: string, envJson: string): void;
  connect(deviceId: string): void;
  message(deviceId: string, messageJson: string): void;
  disconnect(deviceId: string): void;
  fire(deviceId: string, timerId: number): void;
  settle(deviceId: string, commandId: number, ok: boolean, json: string): void;
  setEnv(envJson: string): void;
  count(): number;
}

export type GuestEntryName = keyof GuestEntryPoints;
