// A server that restarts with a live deployment boots its scripts' worker thread before it accepts
// connections: the boards of a restart reconnect at once and should not share the CPU with that
// boot. A server without deployments starts no worker thread (its boot stays short).
import assert from "node:assert/strict";
import fs from "node:fs";
import { test } from "node:test";
import { createTestServer, deployScript, tempDir, waitUntil } from "@sdk/test-helpers";
import { scriptProject } from "./helpers/script-project.ts";

/** The threads of this process named "scripts" (the worker threads run their sandboxes). */
function scriptThreads(): number {
  return fs.readdirSync("/proc/self/task").filter((tid) => {
    try {
      return fs.readFileSync(`/proc/self/task/${tid}/comm`, "utf8").trim() === "scripts";
    } catch {
      return false; // the thread ended meanwhile
    }
  }).length;
}

const script = `import { DeviceScript } from "@sdk/device";
export default class S extends DeviceScript {
  onDeviceConnect() { console.log("up"); }
}`;

test("after a restart with a live deployment the scripts' worker runs before any board connects", {
  skip: process.platform !== "linux" && "thread names are read from /proc/self/task (Linux only)",
}, async (t) => {
  const dataDir = tempDir(t, "sdk-warm-");
  const first = await scriptProject(t, { dataDir });
  const empty = await createTestServer(t);
  await empty.listen();
  assert.equal(scriptThreads(), 0, "no deployment anywhere: no worker thread");

  const deployment = await deployScript(t, first.client, first.project.id, script);
  assert.equal(deployment.status, "active");
  await first.server.close();
  await waitUntil(() => scriptThreads() === 0);

  const second = await createTestServer(t, { dataDir });
  await second.listen();
  assert.equal(scriptThreads(), 1, "the worker thread booted before the server accepted");
});
