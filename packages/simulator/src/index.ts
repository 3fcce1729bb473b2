export { defaultReconnect, type ReconnectOptions } from "./backoff.ts";
export { checkPins } from "./board.ts";
export { type AuthFailure, FrameTooLargeError } from "./connection.ts";
export { controlHelp, runControl } from "./control.ts";
export { type CommandOverride, SimulatedDevice, simulatorVersion } from "./device.ts";
export { CommandError, type CommandErrorCode } from "./errors.ts";
export { Fleet, type FleetOptions, type FleetStartResult, runMany } from "./fleet.ts";
export type { Edge, Level, PinFunction, PinId, PinState, Pull, Transition } from "./hardware/gpio.ts";
export type { I2cBus, I2cConfig } from "./hardware/i2c.ts";
export { Eeprom, type I2cDevice, Tmp102 } from "./hardware/i2c-devices.ts";
export type { Hardware, HardwareEvent } from "./hardware/index.ts";
export type { SpiBus, SpiConfig } from "./hardware/spi.ts";
export type { Uart, UartConfig } from "./hardware/uart.ts";
export type { Rgb } from "./hardware/ws2812.ts";
export { attachControls, controlsHint } from "./terminal-controls.ts";
export {
  type CommandRecord,
  type DeviceEvents,
  type DeviceMessage,
  type LinkState,
  noReply,
  type SimulatedDeviceOptions,
} from "./types.ts";
