export { controlProcessFactory } from "./control-process.ts";
export type {
  DeviceFactory,
  DeviceFactoryInput,
  DeviceTiming,
  DeviceUnderTest,
  PinLevel,
  PinReading,
  Rgb,
} from "./device-under-test.ts";
export {
  type Attempt,
  FakeConnection,
  FakeServer,
  type FakeServerOptions,
  type Message,
} from "./fake-server.ts";
export { deviceConformance } from "./suite.ts";
