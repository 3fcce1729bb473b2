// The guest side of the sandbox. The build bundles this module with the user's script; the server's
// sandbox calls the entry points `createRuntime` returns and provides the guest host (./abi.ts).
// Nothing here runs in Node: it runs inside QuickJS, with no other globals than the ones set up below.
import type { LogLevel } from "@sdk/protocol/hardware";
import { type GuestEntryPoints, type GuestHost, guestHostGlobal } from "./abi.ts";
import { Device, type DeviceBridge } from "./device.ts";
import { SdkError, type SdkErrorCode, useDocsBaseUrl } from "./errors.ts";
import type { Board } from "./pins.ts";
import { type DeviceId, type DeviceMessage, DeviceScript, type ProjectId } from "./script.ts";

// Taken off the global object as soon as this module is evaluated (before the user's module, which
// the build imports after this one), so scripts cannot call the host directly.
const g = globalThis as Record<string, unknown>;
const host = g[guestHostGlobal] as GuestHost;
delete g[guestHostGlobal];
if (host?.docsBaseUrl) useDocsBaseUrl(host.docsBaseUrl);

interface Timer {
  callback: () => unknown;
  repeat: boolean;
}

interface Pending {
  resolve(value: unknown): void;
  reject(error: Error): void;
}

type ScriptClass = new (context: ConstructorParameters<typeof DeviceScript>[0]) => DeviceScript;

function format(args: unknown[]): string {
  return args
    .map((a) => {
      if (typeof a === "string") return a;
      if (a instanceof Error) return a.stack ?? `${a.name}: ${a.message}`;
      try {
        return JSON.stringify(a) ?? String(a);
      } catch {
        return String(a);
      }
    })
    .join(" ");
}

/** Wraps the user's default export into the entry points the sandbox calls. */
export function createRuntime(Script: unknown): GuestEntryPoints {
  if (typeof Script !== "function" || !(Script.prototype instanceof DeviceScript)) {
    throw new TypeError(
      "the script's default export must be a class that extends DeviceScript (from @sdk/device)",
    );
  }
  /**
   * One device's instance, which is also its DEVICE binding's bridge: with thousands of idle boards
   * in a project, one object per device (not a bridge with three closures beside a record), and its
   * timers and waiting commands only once it has some.
   */
  class Instance implements DeviceBridge {
    readonly deviceId: string;
    script!: DeviceScript;
    env!: Record<string, unknown>;
    timers: Map<number, Timer> | undefined;
    pending: Map<number, Pending> | undefined;

    constructor(deviceId: string) {
      this.deviceId = deviceId;
    }

    command(type: string, args: Record<string, unknown>): Promise<unknown> {
      const deviceId = this.deviceId;
      // The device's instance now (a DEVICE kept from before a reconnect reaches the new one).
      const instance = instances.get(deviceId);
      if (!instance)
        return Promise.reject(new SdkError("device_offline", `${type}: the device is not connected`));
      return new Promise((resolve, reject) => {
        const id = ++nextCommand;
        instance.pending ??= new Map();
        instance.pending.set(id, { resolve, reject });
        host.command(deviceId, id, type, JSON.stringify(args));
      });
    }

    emitState(entityId: string, valueJson: string): void {
      host.emitState(this.deviceId, entityId, valueJson);
    }

    send(json: string): void {
      host.send(this.deviceId, json);
    }
  }

  const instances = new Map<string, Instance>();
  const timerOwners = new Map<number, string>();
  let current: string | null = null;
  let nextTimer = 0;
  let nextCommand = 0;

  const report = (deviceId: string, error: unknown) => {
    const e = error instanceof Error ? error : new Error(format([error]));
    host.error(deviceId, e.stack ? `${e.name}: ${e.message}\n${e.stack}` : `${e.name}: ${e.message}`);
  };

  /** Runs a handler for a device; a returned promise's rejection is reported too. */
  const invoke = (deviceId: string, run: () => unknown) => {
    current = deviceId;
    try {
      const result = run();
      if (result && typeof (result as Promise<unknown>).then === "function") {
        (result as Promise<unknown>).then(undefined, (error) => report(deviceId, error));
      }
    } catch (error) {
      report(deviceId, error);
    }
  };

  const owner = (what: string): string => {
    if (current === null || !instances.has(current)) {
      throw new Error(`${what} can only be used inside a handler (onDeviceConnect, onMessage, a timer)`);
    }
    return current;
  };

  const addTimer = (callback: unknown, delay: unknown, repeat: boolean, args: unknown[]) => {
    if (typeof callback !== "function") throw new TypeError("the timer callback must be a function");
    const deviceId = owner(repeat ? "setInterval" : "setTimeout");
    const id = ++nextTimer;
    host.setTimer(deviceId, id, Number(delay) || 0, repeat);
    const instance = instances.get(deviceId)!;
    instance.timers ??= new Map();
    instance.timers.set(id, { callback: () => callback(...args), repeat });
    timerOwners.set(id, deviceId);
    return id;
  };
  const removeTimer = (id: unknown) => {
    const deviceId = timerOwners.get(id as number);
    if (deviceId === undefined) return;
    timerOwners.delete(id as number);
    instances.get(deviceId)?.timers?.delete(id as number);
    host.clearTimer(deviceId, id as number);
  };

  g.setTimeout = (callback: unknown, delay?: unknown, ...args: unknown[]) =>
    addTimer(callback, delay, false, args);
  g.setInterval = (callback: unknown, delay?: unknown, ...args: unknown[]) =>
    addTimer(callback, delay, true, args);
  g.clearTimeout = removeTimer;
  g.clearInterval = removeTimer;
  const log =
    (level: LogLevel) =>
    (...args: unknown[]) => {
      if (current !== null) host.log(current, level, format(args));
    };
  g.console = {
    log: log("info"),
    info: log("info"),
    debug: log("debug"),
    warn: log("warn"),
    error: log("error"),
  };

  const applyEnv = (env: Record<string, unknown>, vars: Record<string, string>) => {
    for (const key of Object.keys(env)) if (key !== "DEVICE") delete env[key];
    for (const [key, value] of Object.entries(vars)) if (key !== "DEVICE") env[key] = value;
  };
  let projectEnv: Record<string, string> = {};

  return {
    create(deviceId, projectId, board, envJson) {
      projectEnv = JSON.parse(envJson) as Record<string, string>;
      const instance = new Instance(deviceId);
      const device = new Device(board as Board, instance);
      const env: Record<string, unknown> = {};
      applyEnv(env, projectEnv);
      Object.defineProperty(env, "DEVICE", { value: device, enumerable: false });
      current = deviceId;
      instance.env = env;
      instance.script = new (Script as ScriptClass)({
        env: env as never,
        deviceId: deviceId as DeviceId,
        projectId: projectId as ProjectId,
      });
      instances.set(deviceId, instance);
    },
    connect(deviceId) {
      const instance = instances.get(deviceId);
      if (instance?.script.onDeviceConnect) invoke(deviceId, () => instance.script.onDeviceConnect!());
    },
    message(deviceId, messageJson) {
      const instance = instances.get(deviceId);
      if (instance?.script.onMessage) {
        invoke(deviceId, () => instance.script.onMessage!(JSON.parse(messageJson) as DeviceMessage));
      }
    },
    disconnect(deviceId) {
      const instance = instances.get(deviceId);
      if (!instance) return;
      if (instance.script.onDeviceDisconnect) invoke(deviceId, () => instance.script.onDeviceDisconnect!());
      for (const id of instance.timers?.keys() ?? []) timerOwners.delete(id);
      instance.timers = undefined;
      for (const pending of instance.pending?.values() ?? []) {
        pending.reject(new SdkError("device_offline", "the device disconnected before answering"));
      }
      instance.pending = undefined;
      instances.delete(deviceId);
    },
    fire(deviceId, timerId) {
      const timer = instances.get(deviceId)?.timers?.get(timerId);
      if (!timer) return;
      if (!timer.repeat) {
        instances.get(deviceId)!.timers!.delete(timerId);
        timerOwners.delete(timerId);
      }
      invoke(deviceId, timer.callback);
    },
    settle(deviceId, commandId, ok, json) {
      const pending = instances.get(deviceId)?.pending?.get(commandId);
      if (!pending) return;
      instances.get(deviceId)!.pending!.delete(commandId);
      current = deviceId;
      if (ok) pending.resolve(JSON.parse(json));
      else {
        const { code, message } = JSON.parse(json) as { code: SdkErrorCode; message: string };
        pending.reject(new SdkError(code, message));
      }
    },
    setEnv(envJson) {
      projectEnv = JSON.parse(envJson) as Record<string, string>;
      for (const instance of instances.values()) applyEnv(instance.env, projectEnv);
    },
    count: () => instances.size,
  };
}
