export {
  type BuildOptions,
  type BuildResult,
  build,
  type Diagnostic,
  formatDiagnostic,
  loadProjectConfig,
  type Manifest,
  ProjectConfigError,
  scriptCompilerOptions,
} from "./build.ts";
