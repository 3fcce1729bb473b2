export * from "./api.ts";
export * from "./device.ts";
export * from "./envelope.ts";
export * from "./errors.ts";
export * from "./ids.ts";
export * from "./watch.ts";
