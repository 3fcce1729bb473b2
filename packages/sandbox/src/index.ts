export {
  defaultLimits,
  type Level,
  type LoadOptions,
  ProjectSandbox,
  type SandboxHost,
  type SandboxLimits,
  ScriptLoadError,
  scriptTimeoutMessage,
} from "./sandbox.ts";
