export {
  type BuildOptions,
  type BuildResult,
  build,
  type Diagnostic,
  formatDiagnostic,
  loadProjectConfig,
  type Manifest,
  ProjectConfigError,
} from "./build.ts";
export { projectTsconfig, writeScriptTypes } from "./types.ts";
