export { ScriptLoadError, scriptTimeoutMessage } from "./errors.ts";
export { GuestAbiError } from "./guest-abi.ts";
export { defaultLimits, type SandboxLimits } from "./limits.ts";
export { type Level, type LoadOptions, ProjectSandbox, type SandboxHost } from "./sandbox.ts";
