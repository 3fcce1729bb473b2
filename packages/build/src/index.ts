export {
  type BuildOptions,
  type BuildResult,
  build,
  type Diagnostic,
  formatDiagnostic,
  type Manifest,
} from "./build.ts";
