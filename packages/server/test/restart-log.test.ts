// A server restart shows in the device log of every device that was online: two "connected" lines
// in a row would hide the outage. Real server processes on one data directory, stopped by signals.
import assert from "node:assert/strict";
import { type TestContext, test } from "node:test";
import { deviceCloseCodes, restartCloseReason } from "@sdk/protocol";
import { startServerProcess, tempDir, waitUntil } from "@sdk/test-helpers";
import { simulatedBoard } from "./helpers/script-project.ts";

async function onlineDevice(t: TestContext) {
  const dataDir = tempDir(t, "sdk-restart-");
  const first = await startServerProcess(t, dataDir);
  const auth = await first
    .client()
    .api.register({ body: { email: "a@example.com", password: "correct horse battery", issueToken: true } });
  const token = auth.token!.token;
  const api = first.client(token).api;
  const project = await api.createProject({ body: { name: "p" } });
  const { device, credentials } = await api.createDevice({
    params: { projectId: project.id },
    body: { name: "d", board: "pico_w" },
  });
  const connect = async (host: string) => {
    const sim = simulatedBoard(t, host, credentials);
    sim.start();
    await sim.waitFor("connected", 10_000);
    return sim;
  };
  const sim = await connect(new URL(first.url).host);
  const params = { projectId: project.id, deviceId: device.id };
  /** System lines, oldest first. */
  const systemLines = async (proc: typeof first) =>
    (await proc.client(token).api.listDeviceLogs({ params, query: { limit: 100 } }))
      .filter((l) => l.source === "system")
      .reverse();
  return { dataDir, first, sim, connect, systemLines, token, params };
}

test("graceful stop (SIGTERM): the log says the server stopped between the two connected lines", async (t) => {
  const s = await onlineDevice(t);
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    s.sim.once("disconnected", resolve),
  );
  await s.first.stop("SIGTERM", 10_000);
  await s.sim.waitFor(() => !s.sim.connected, 10_000);
  // SIGTERM is a restart: the board is told to come back quickly (1012 with a retry hint).
  assert.deepEqual(await closed, {
    code: deviceCloseCodes.serviceRestart,
    reason: restartCloseReason(),
  });
  const second = await startServerProcess(t, s.dataDir);
  await s.connect(new URL(second.url).host);
  await waitUntil(
    async () => (await s.systemLines(second)).filter((l) => /^connected/.test(l.message)).length === 2,
  );
  const lines = (await s.systemLines(second)).map((l) => l.message);
  t.diagnostic(lines.join(" | "));
  const connected = lines.flatMap((m, i) => (/^connected/.test(m) ? [i] : []));
  const between = lines.slice(connected[0]! + 1, connected[1]);
  assert.ok(
    between.some((m) => /server stopping/.test(m)),
    `a "server stopping" line between the connected lines: ${JSON.stringify(lines)}`,
  );
  const device = await second.client(s.token).api.getDevice({ params: s.params });
  assert.equal(device.status, "online");
});

test("unclean stop (SIGKILL): at boot the log says the server restarted and the device went offline", async (t) => {
  const s = await onlineDevice(t);
  await s.first.stop("SIGKILL", 10_000);
  await s.sim.waitFor(() => !s.sim.connected, 10_000);
  const second = await startServerProcess(t, s.dataDir);
  const lines = (await s.systemLines(second)).map((l) => l.message);
  t.diagnostic(lines.join(" | "));
  assert.match(
    lines.at(-1) ?? "",
    /server restarted/,
    `the last line says the server restarted: ${JSON.stringify(lines)}`,
  );
  assert.match(
    lines.at(-1) ?? "",
    /the device, last seen \d{4}-\d\d-\d\dT[\d:.]+Z, went offline with it/,
    "its last activity, not when it connected",
  );
  await s.connect(new URL(second.url).host);
  await waitUntil(
    async () => (await s.systemLines(second)).filter((l) => /^connected/.test(l.message)).length === 2,
  );
  const after = (await s.systemLines(second)).map((l) => l.message);
  const connected = after.flatMap((m, i) => (/^connected/.test(m) ? [i] : []));
  assert.ok(
    after.slice(connected[0]! + 1, connected[1]).some((m) => /server restarted/.test(m)),
    `the restart line sits between the connected lines: ${JSON.stringify(after)}`,
  );
});
