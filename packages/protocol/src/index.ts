export * from "./api.ts";
export * from "./envelope.ts";
export * from "./errors.ts";
export * from "./ids.ts";
