export * from "./alerts.ts";
export * from "./config-block.ts";
export * from "./device.ts";
export * from "./endpoints.ts";
export * from "./envelope.ts";
export * from "./errors.ts";
// Names that are both a zod schema here and a plain type in hardware.ts: the schema wins.
export * from "./fields.ts";
export { Board, ConnectionState, LogLevel } from "./fields.ts";
export * from "./firmware-version.ts";
export * from "./hardware.ts";
export * from "./ids.ts";
export * from "./issues.ts";
export * from "./manifest.ts";
export * from "./pins.ts";
export * from "./requests.ts";
export * from "./resources.ts";
export * from "./simulator.ts";
export * from "./watch.ts";
