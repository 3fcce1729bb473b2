/**
 * `@sdk/device`: the library device scripts import.
 *
 * ```ts
 * import { DeviceScript, OnboardLED } from "@sdk/device";
 * export default class Blink extends DeviceScript {
 *   async onDeviceConnect() { setInterval(() => this.env.DEVICE.gpioToggle(OnboardLED), 500); }
 * }
 * ```
 * @packageDocumentation
 */
export {
  ConfigError,
  defineConfig,
  type EntityConfig,
  type EntityKind,
  type ProjectConfig,
  type StateClass,
} from "./config.ts";
export {
  type ByteData,
  Device,
  type DeviceBridge,
  type Edge,
  type OutgoingMessage,
  type PinLevel,
  type PinMode,
  type Pull,
  type Rgb,
} from "./device.ts";
export { SdkError, type SdkErrorCode } from "./errors.ts";
export { type HaCommand, isHaCommand } from "./ha-command.ts";
export * from "./pins.ts";
export {
  type CustomMessage,
  type DeviceId,
  type DeviceMessage,
  DeviceScript,
  type GpioChangeMessage,
  type ProjectId,
  type ScriptContext,
  type ScriptEnv,
  type UartRxMessage,
} from "./script.ts";

/** The version of this library, recorded in each deployment's manifest. */
export const libraryVersion = "0.1.0";
