import type { Device } from "./device.ts";

declare const brand: unique symbol;
/** A device's id (`dev_…`). */
export type DeviceId = string & { readonly [brand]: "DeviceId" };
/** A project's id (`prj_…`). */
export type ProjectId = string & { readonly [brand]: "ProjectId" };

/** A level change of a watched input pin (see `DEVICE.watchPin`). */
export interface GpioChangeMessage {
  type: "gpio_change";
  pin: number;
  value: 0 | 1;
}

/** Bytes received on a configured UART. */
export interface UartRxMessage {
  type: "uart_rx";
  uart: 0 | 1;
  data: number[];
}

/** Any other message: custom device events, or messages sent to the script from the API or dashboard. */
export interface CustomMessage {
  type: string;
  [field: string]: unknown;
}

/** What `onMessage` receives. */
export type DeviceMessage = GpioChangeMessage | UartRxMessage | CustomMessage;

/** The project's environment variables (`sdk env set`) plus the `DEVICE` binding. */
export type ScriptEnv<Vars extends Record<string, string> = Record<string, string>> = Readonly<Vars> & {
  /** Drives this script's board. */
  readonly DEVICE: Device;
};

/** What the runtime hands each instance. */
export interface ScriptContext<Vars extends Record<string, string> = Record<string, string>> {
  env: ScriptEnv<Vars>;
  deviceId: DeviceId;
  projectId: ProjectId;
}

/**
 * The base class of a device script. The server creates one instance per connected device and calls
 * its handlers: `onDeviceConnect` when the device comes online, `onMessage` for each event from the
 * device (or message sent to it), `onDeviceDisconnect` when it goes away (its timers are cleared).
 *
 * ```ts
 * import { DeviceScript, OnboardLED } from "@sdk/device";
 * export default class Blink extends DeviceScript {
 *   async onDeviceConnect() { setInterval(() => this.env.DEVICE.gpioToggle(OnboardLED), 500); }
 * }
 * ```
 */
export abstract class DeviceScript<Vars extends Record<string, string> = Record<string, string>> {
  /** Env vars of the project, and `DEVICE`. Values change in place when an env var is set. */
  readonly env: ScriptEnv<Vars>;
  /** The device this instance serves. */
  readonly deviceId: DeviceId;
  /** The project the device belongs to. */
  readonly projectId: ProjectId;

  constructor(context: ScriptContext<Vars>) {
    this.env = context.env;
    this.deviceId = context.deviceId;
    this.projectId = context.projectId;
  }

  /** Called once the device is online. */
  onDeviceConnect?(): void | Promise<void>;
  /** Called for each message from the device (gpio_change, uart_rx, custom types) or sent to the script. */
  onMessage?(message: DeviceMessage): void | Promise<void>;
  /** Called when the device disconnects; its timers are cleared afterwards. */
  onDeviceDisconnect?(): void | Promise<void>;
}
