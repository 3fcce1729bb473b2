// `sdk logs --tail` follows the whole project over the project watch socket: a device created
// after it started streams too (the real CLI process against a real server process).
import assert from "node:assert/strict";
import { test } from "node:test";
import { SimulatedDevice } from "@sdk/simulator";
import { sdkLive, signedInProject } from "./helpers.ts";

test("logs --tail shows the logs of a device added after it started", async (t) => {
  const { url, home, work, client, project } = await signedInProject(t, "bench", "sdk-logs");
  const old = await client.api.createDevice({
    params: { projectId: project.id },
    body: { name: "old", board: "pico_w" },
  });

  const tail = sdkLive(t, ["logs", "--tail", "--project", project.id], { home, cwd: work });
  await tail.waitForOutput(
    (s) => s.stderr.includes("Streaming logs of 1 device, and of devices added later"),
    20_000,
    "the stream to open",
  );

  const added = await client.api.createDevice({
    params: { projectId: project.id },
    body: { name: "newcomer", board: "pico2_w" },
  });
  await tail.waitForOutput(
    (s) => s.stderr.includes(`New device newcomer (${added.device.id})`),
    20_000,
    "the new device to be announced",
  );
  const boards = [old, added].map(
    ({ credentials }) =>
      new SimulatedDevice({
        server: new URL(url).host,
        deviceId: credentials.deviceId,
        secret: credentials.secret,
        board: "pico2_w",
        reconnect: false,
      }),
  );
  for (const board of boards) t.after(() => board.stop());
  const [oldBoard, newBoard] = boards as [SimulatedDevice, SimulatedDevice];
  newBoard.start();
  await newBoard.waitFor("connected", 20_000);
  newBoard.sendLog("warn", "the newcomer speaks");
  oldBoard.start();
  await oldBoard.waitFor("connected", 20_000);
  oldBoard.sendLog("info", "the old one speaks");
  await tail.waitForOutput(
    (s) => s.stdout.includes("the newcomer speaks") && s.stdout.includes("the old one speaks"),
    20_000,
    "both devices' lines",
  );
  const line = tail
    .stdout()
    .split("\n")
    .find((l) => l.includes("the newcomer speaks"));
  assert.ok(line?.includes(added.device.id), `the line names its device: ${line}`);

  tail.child.kill("SIGINT");
  assert.equal((await tail.exited).code, 0);
});
