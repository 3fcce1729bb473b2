import type { GuestEntryName, GuestHostFunctions } from "@sdk/device/abi";
import { logLevels } from "@sdk/protocol/hardware";
import { GuestAbiError, guestJson, guestJsonObject } from "./guest-abi.ts";
import type { SandboxHost } from "./sandbox-host.ts";
import type { DeviceTimers } from "./timers.ts";

const levels: ReadonlySet<string> = new Set(logLevels);

/** What the guest host functions act on. */
export interface GuestHostContext {
  host: SandboxHost;
  /** The timers of an attached device; undefined for a device that is not attached. */
  timers(deviceId: string): DeviceTimers | undefined;
  /** Hands a command's outcome back to the guest (the `settle` entry point). */
  settle(deviceId: string, commandId: number, ok: boolean, json: string): void;
  /** The current entry ran past its deadline. */
  interrupted(): boolean;
  /** An allocation failed in the guest, even if the script then caught the error. */
  outOfMemory(): void;
  /** The guest ran out of stack, even if the script then caught the error; `stack` is the guest's. */
  stackOverflow(stack: string): void;
  mapStack(stack: string): string;
  /** The entry point running now (null between entries). */
  entry(): GuestEntryName | null;
}

/** The host's side of the guest ABI: every call names an attached device and goes to the server. */
export function guestHostFunctions(context: GuestHostContext): GuestHostFunctions {
  const { host } = context;
  const attached = (deviceId: string): DeviceTimers => {
    const timers = context.timers(deviceId);
    if (!timers) throw new GuestAbiError(`device ${deviceId} is not attached to this project's scripts`);
    return timers;
  };
  return {
    command: (deviceId, commandId, type, argsJson) => {
      attached(deviceId);
      const args = guestJsonObject("command", "argsJson", argsJson);
      host.command(deviceId, type, args).then(
        (value) => context.settle(deviceId, commandId, true, JSON.stringify(value ?? null)),
        (error: { code?: string; message?: string }) =>
          context.settle(
            deviceId,
            commandId,
            false,
            JSON.stringify({ code: error?.code ?? "device_error", message: error?.message ?? String(error) }),
          ),
      );
    },
    emitState: (deviceId, entityId, valueJson) => {
      attached(deviceId);
      host.emitState(deviceId, entityId, guestJson("emitState", "valueJson", valueJson));
    },
    send: (deviceId, messageJson) => {
      attached(deviceId);
      host.send(deviceId, guestJsonObject("send", "messageJson", messageJson));
    },
    log: (deviceId, level, text) => {
      if (!levels.has(level)) throw new GuestAbiError(`log: level must be one of ${[...levels].join(", ")}`);
      if (context.timers(deviceId)) host.log(deviceId, level, text);
    },
    error: (deviceId, stack) => {
      // An interrupt the guest caught and reported is logged once, by the sandbox, as a timeout.
      if (context.interrupted() || stack.startsWith("InternalError: interrupted")) return;
      if (stack.startsWith("InternalError: out of memory")) return context.outOfMemory();
      if (stack.startsWith("InternalError: stack overflow")) return context.stackOverflow(stack);
      if (!context.timers(deviceId)) return;
      host.log(deviceId, "error", context.mapStack(stack));
      // A handler error the script's runtime caught (it never reaches the entry's result): still a failure.
      host.failed?.(deviceId, "error", context.entry() ?? undefined);
    },
    setTimer: (deviceId, timerId, delayMs, repeat) => attached(deviceId).set(timerId, delayMs, repeat),
    clearTimer: (deviceId, timerId) => context.timers(deviceId)?.clear(timerId),
  };
}
