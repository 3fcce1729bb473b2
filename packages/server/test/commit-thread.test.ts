// Where SQLite's group commit runs (SQLITE_COMMIT_THREAD): on a disk that is slow to sync, `auto`
// gives it a thread of its own; a board's states and logs are stored all the same and kept across
// a restart. The slow disk is real waiting: an LD_PRELOAD shim makes each fsync sleep first.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { type TestContext, test } from "node:test";
import { SimulatedDevice } from "@sdk/simulator";
import { slowFsyncEnv, startServerProcess, tempDir, waitUntil } from "@sdk/test-helpers";

/** The environment that makes every fsync of the server take `delayMs` longer, or null (skipped). */
function slowDisk(t: TestContext, delayMs: number): Record<string, string> | null {
  try {
    execFileSync("cc", ["--version"], { stdio: "ignore" });
  } catch {
    t.skip("needs a C compiler (cc) to build the slow-disk shim; .ci/run installs gcc");
    return null;
  }
  return slowFsyncEnv(tempDir(t, "sdk-slow-fsync-"), delayMs);
}

type Server = Awaited<ReturnType<typeof startServerProcess>>;

/** The fields of the server's "listening" log line about its commits. */
function commitsOf(server: Server) {
  const line = server.logs().find((l) => typeof l.msg === "string" && l.msg.includes("listening on"));
  assert.ok(line, `no listening line in:\n${server.stdout()}`);
  return { thread: line.commitThread, diskSyncMs: line.diskSyncMs };
}

test("on a disk slow to sync the group commit runs in a thread; a board's states and logs are stored and survive a restart", {
  timeout: 90_000,
}, async (t) => {
  const shim = slowDisk(t, 5);
  if (!shim) return;
  const dataDir = tempDir(t, "sdk-commit-thread-");
  const first = await startServerProcess(t, dataDir, shim);
  const commits = commitsOf(first);
  assert.equal(commits.thread, true, "auto chose the thread");
  assert.ok(Number(commits.diskSyncMs) >= 5, `the disk's sync time was measured (${commits.diskSyncMs} ms)`);

  const auth = await first
    .client()
    .api.register({ body: { email: "a@example.com", password: "correct horse battery", issueToken: true } });
  const api = first.client(auth.token!.token).api;
  const project = await api.createProject({ body: { name: "Greenhouse" } });
  const { device, credentials } = await api.createDevice({
    params: { projectId: project.id },
    body: { name: "Bench", board: "pico_w" },
  });
  const params = { projectId: project.id, deviceId: device.id };
  const sim = new SimulatedDevice({
    server: new URL(first.url).host,
    deviceId: device.id,
    secret: credentials.secret,
    board: "pico_w",
    reconnect: false,
  });
  t.after(() => sim.stop());
  sim.start();
  await sim.waitFor("connected", 10_000);
  const sent = 60;
  for (let i = 1; i <= sent; i++) {
    assert.ok(sim.sendState("count", i));
    assert.ok(sim.sendLog("info", `reading ${i}`));
  }
  const latest = async () =>
    (await api.getDeviceState({ params })).find((v) => v.entityId === "count")?.value;
  await waitUntil(async () => (await latest()) === sent, 15_000, "the last value stored");
  const stored = async () => {
    const history = await api.getStateHistory({
      params: { ...params, entityId: "count" },
      query: { limit: 500 },
    });
    const logs = await api.listDeviceLogs({ params, query: { limit: 500 } });
    return {
      values: history.map((h) => h.value).sort((a, b) => Number(a) - Number(b)),
      readings: logs.filter((l) => l.message.startsWith("reading ")).length,
      online: (await api.getDevice({ params })).status,
    };
  };
  const everyValue = Array.from({ length: sent }, (_, i) => i + 1);
  await waitUntil(async () => (await stored()).readings === sent, 15_000, "every log line stored");
  const before = await stored();
  assert.deepEqual(before.values, everyValue, "every value in the history, none lost");
  assert.equal(before.online, "online");

  await sim.stop();
  await first.stop("SIGTERM");
  const second = await startServerProcess(t, dataDir, shim);
  const api2 = second.client(auth.token!.token).api;
  assert.equal((await api2.getDeviceState({ params })).find((v) => v.entityId === "count")?.value, sent);
  const history = await api2.getStateHistory({
    params: { ...params, entityId: "count" },
    query: { limit: 500 },
  });
  assert.deepEqual(
    history.map((h) => h.value).sort((a, b) => Number(a) - Number(b)),
    everyValue,
    "the history kept across the restart",
  );
  const logs = await api2.listDeviceLogs({ params, query: { limit: 500 } });
  assert.equal(logs.filter((l) => l.message.startsWith("reading ")).length, sent);
  assert.equal(
    (await api2.getDevice({ params })).status,
    "offline",
    "marked offline when the server stopped",
  );
});

test("SQLITE_COMMIT_THREAD=off keeps the commit on the main thread even on a slow disk, =on moves it on any disk", {
  timeout: 60_000,
}, async (t) => {
  const shim = slowDisk(t, 5);
  if (!shim) return;
  const off = await startServerProcess(t, tempDir(t, "sdk-commit-off-"), {
    ...shim,
    SQLITE_COMMIT_THREAD: "off",
  });
  assert.deepEqual(commitsOf(off), { thread: false, diskSyncMs: null }, "not measured when not asked");
  await off.stop("SIGTERM");
  const on = await startServerProcess(t, tempDir(t, "sdk-commit-on-"), { SQLITE_COMMIT_THREAD: "on" });
  assert.deepEqual(commitsOf(on), { thread: true, diskSyncMs: null });
  const refused = await startServerProcess(t, tempDir(t, "sdk-commit-bad-"), {
    SQLITE_COMMIT_THREAD: "maybe",
  }).then(
    () => null,
    (error: unknown) => String(error),
  );
  assert.match(refused ?? "", /SQLITE_COMMIT_THREAD must be one of auto, on, off \(got "maybe"\)/);
});
