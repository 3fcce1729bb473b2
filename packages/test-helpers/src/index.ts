export { type Child, type ChildOptions, type Exit, type RunResult, runNode, spawnNode } from "./child.ts";
export { buildScript, deployScript } from "./scripts.ts";
export { startTestServer, type TestServer } from "./server.ts";
export {
  boundedFetch,
  freePort,
  repoRoot,
  type ServerProcess,
  serverEnv,
  spawnServer,
  startServerProcess,
  waitForHealth,
} from "./server-process.ts";
export { tempDir } from "./temp.ts";
export { waitUntil, within } from "./wait.ts";
