export {
  type BuildOptions,
  type BuildResult,
  build,
  type Diagnostic,
  formatDiagnostic,
  loadProjectConfig,
  type Manifest,
  scriptCompilerOptions,
} from "./build.ts";
