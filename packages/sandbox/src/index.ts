export { ScriptLoadError, scriptTimeoutMessage } from "./errors.ts";
export { GuestAbiError } from "./guest-abi.ts";
export type { GuestTime } from "./guest-time.ts";
export { defaultLimits, type SandboxLimits } from "./limits.ts";
export { type LoadOptions, ProjectSandbox } from "./sandbox.ts";
export type { SandboxHost } from "./sandbox-host.ts";
export type { Scheduler } from "./scheduler.ts";
