export { type Child, type ChildOptions, type Exit, type RunResult, runNode, spawnNode } from "./child.ts";
export { type SyntheticReleaseOptions, syntheticRelease } from "./firmware-release.ts";
export { buildScript, deployScript } from "./scripts.ts";
export { createTestServer, startTestServer, type TestServer, type TestServerOptions } from "./server.ts";
export {
  boundedFetch,
  freePort,
  type ServerProcess,
  serverEnv,
  spawnServer,
  startServerProcess,
  waitForHealth,
} from "./server-process.ts";
export { slowFsyncEnv } from "./slow-fsync.ts";
export { tempDir } from "./temp.ts";
export { fakeConfigSector, fakeReleaseUf2 } from "./uf2-fixture.ts";
export { waitUntil, within } from "./wait.ts";
export { webhookReceiver } from "./webhook-receiver.ts";
