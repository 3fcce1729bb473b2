// The project `sdk init` writes, run as a user would: built, deployed to a real server, driven on a
// simulated board. Its button is a binary_sensor (true while pressed), its LED a switch that an
// ha_command turns on and off, confirmed with emitState.
import assert from "node:assert/strict";
import path from "node:path";
import { test } from "node:test";
import { build } from "@sdk/build";
import { SimulatedDevice } from "@sdk/simulator";
import { startTestServer, waitUntil } from "@sdk/test-helpers";
import { sdk, tempDir } from "./helpers.ts";

test("sdk init's project: the button reads true/false, the LED switch follows ha_command and confirms", async (t) => {
  const home = tempDir(t, "sdk-template-home-");
  const work = tempDir(t, "sdk-template-work-");
  const init = await sdk(t, ["init", "lamp", "--no-link"], { home, cwd: work });
  assert.equal(init.code, 0, init.stderr);
  const dir = path.join(work, "lamp");

  const built = await build({ projectDir: dir });
  if (!built.ok) assert.fail(built.diagnostics.map((d) => `${d.file}:${d.line} ${d.message}`).join("\n"));
  assert.deepEqual(
    built.manifest.entities.map((e) => [e.id, e.kind]),
    [
      ["button", "binary_sensor"],
      ["led", "switch"],
      ["temperature", "sensor"],
    ],
  );

  const s = await startTestServer(t);
  const { client } = await s.user();
  const project = await client.api.createProject({ body: { name: "lamp" } });
  const deployment = await client.api.createDeployment({
    params: { projectId: project.id },
    body: { bundle: built.bundle, sourceMap: built.sourceMap, manifest: built.manifest },
  });
  assert.equal(deployment.status, "active", `deployment: ${deployment.error}`);
  assert.deepEqual(
    (await client.api.listEntities({ params: { projectId: project.id } })).map((e) => e.id),
    ["button", "led", "temperature"],
  );
  const { device, credentials } = await client.api.createDevice({
    params: { projectId: project.id },
    body: { name: "board", board: built.manifest.board },
  });
  const sim = new SimulatedDevice({
    server: new URL(s.url).host,
    deviceId: device.id,
    secret: credentials.secret,
    board: built.manifest.board,
    reconnect: false,
  });
  t.after(() => sim.stop());
  sim.start();
  await sim.waitFor("connected", 10_000);

  const params = { projectId: project.id, deviceId: device.id };
  const value = async (id: string) =>
    (await client.api.getDeviceState({ params })).find((v) => v.entityId === id)?.value;
  await waitUntil(
    async () => (await value("led")) === false,
    10_000,
    "the LED switch reports off at connect",
  );
  await sim.waitFor(() => sim.commandsOf("gpio_watch").length > 0, 10_000);

  sim.setInput(15, 0);
  await waitUntil(
    async () => (await value("button")) === true,
    10_000,
    "the button reads true while pressed",
  );
  sim.setInput(15, null);
  await waitUntil(
    async () => (await value("button")) === false,
    10_000,
    "the button reads false once let go",
  );

  const command = (state: "ON" | "OFF") =>
    client.api.sendDeviceMessage({
      params,
      body: { type: "ha_command", entityId: "led", kind: "switch", state },
    });
  assert.deepEqual(await command("ON"), { delivered: true });
  await waitUntil(async () => (await value("led")) === true, 10_000, "the LED switch confirms on");
  assert.equal(sim.led, 1, "the onboard LED is lit");
  await command("OFF");
  await waitUntil(async () => (await value("led")) === false, 10_000, "the LED switch confirms off");
  assert.equal(sim.led, 0, "the onboard LED is dark");

  // A malformed command (a switch has no brightness) is not one: only the valid OFF after it writes the LED.
  const writes = () => sim.commandsOf("gpio_write").length;
  const before = writes();
  await client.api.sendDeviceMessage({
    params,
    body: { type: "ha_command", entityId: "led", kind: "switch", state: "ON", brightness: 9 },
  });
  await command("OFF");
  await sim.waitFor(() => writes() > before, 10_000);
  assert.equal(writes(), before + 1, "the malformed command wrote nothing");
  assert.equal(sim.led, 0);
  const logs = await client.api.listDeviceLogs({ params, query: { limit: 200 } });
  assert.deepEqual(
    logs
      .filter((l) => l.source === "script" && (l.level === "error" || l.level === "warn"))
      .map((l) => l.message),
    [],
  );
});
