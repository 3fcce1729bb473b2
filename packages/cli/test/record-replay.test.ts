// Issue 21 end to end: record a simulated board's session against a real server (`sdk record`),
// replay it with `sdk test` (it matches), change the script (the divergence shows as a diff, exit 1),
// accept it with `--update` (then it matches again).
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { SimulatedDevice } from "@sdk/simulator";
import { waitUntil } from "@sdk/test-helpers";
import { sdk, sdkLive, signedInProject } from "./helpers.ts";
import { project } from "./replay-helpers.ts";

const fan = (threshold: number) => `import { DeviceScript } from "@sdk/device";
export default class Fan extends DeviceScript {
  async onDeviceConnect() {
    await this.env.DEVICE.pinMode(2, "output");
  }
  async onMessage(msg) {
    if (msg.type !== "reading") return;
    const hot = msg.celsius > ${threshold};
    if (hot) await this.env.DEVICE.gpioWrite(2, 1);
    this.env.DEVICE.emitState("hot", hot);
  }
}
`;

test("record a session with sdk record, change the script, sdk test shows the divergence, --update accepts it", async (t) => {
  const { url, home, client, project: server } = await signedInProject(t, "fan", "sdk-record-replay");
  const dir = project(t, fan(30));
  const inDir = (args: string[]) => sdk(t, [...args, "--project", server.id], { home, cwd: dir });
  const deployed = await inDir(["deploy"]);
  assert.equal(deployed.code, 0, deployed.stderr);

  const { device, credentials } = await client.api.createDevice({
    params: { projectId: server.id },
    body: { name: "fan", board: "pico_w" },
  });
  const ids = { projectId: server.id, deviceId: device.id };
  const board = new SimulatedDevice({
    server: new URL(url).host,
    deviceId: credentials.deviceId,
    secret: credentials.secret,
    board: "pico_w",
    reconnect: false,
  });
  t.after(() => board.stop());

  const file = path.join("test", "recordings", "fan.jsonl");
  const recording = sdkLive(t, ["record", "--device", device.id, file, "--project", server.id], {
    home,
    cwd: dir,
  });
  await recording.waitForOutput(
    (s) => s.stderr.includes("waiting for the device to connect"),
    20_000,
    "the recording to start",
  );
  board.start();
  await recording.waitForOutput((s) => s.stderr.includes("device connected (pico_w"), 20_000, "the connect");
  const hot = async () =>
    (await client.api.getDeviceState({ params: ids })).find((v) => v.entityId === "hot")?.value;
  board.sendEvent("reading", { celsius: 25 });
  await waitUntil(async () => (await hot()) === false, 20_000, "hot = false at 25 °C");
  board.sendEvent("reading", { celsius: 35 });
  await waitUntil(async () => (await hot()) === true, 20_000, "hot = true at 35 °C");
  await board.stop();
  await recording.waitForOutput((s) => s.stderr.includes("device disconnected"), 20_000, "the disconnect");
  recording.child.kill("SIGINT");
  assert.equal((await recording.exited).code, 0, recording.stderr());

  const matching = await inDir(["test"]);
  assert.equal(matching.code, 0, matching.stdout + matching.stderr);
  assert.match(
    matching.stdout,
    /^✔ test\/recordings\/fan\.jsonl \(4 inputs, 2 commands, 2 states, 0 sends\)$/m,
  );

  fs.writeFileSync(path.join(dir, "src", "index.ts"), fan(20));
  const diverging = await inDir(["test"]);
  assert.equal(diverging.code, 1, diverging.stdout + diverging.stderr);
  assert.match(diverging.stdout, /^✖ test\/recordings\/fan\.jsonl /m);
  assert.match(diverging.stdout, /^ {4}@ message \{type:"reading",celsius:25\} at [\d.]+ s$/m);
  assert.match(diverging.stdout, /^ {4}\+ command gpio_write \{pin:2,value:1\} at [\d.]+ s$/m);
  assert.match(diverging.stdout, /^ {4}~ state hot: recorded false, now true at [\d.]+ s$/m);
  assert.match(diverging.stdout, /accept it with: sdk test --update/);

  const accepted = await inDir(["test", "--update"]);
  assert.equal(accepted.code, 0, accepted.stdout + accepted.stderr);
  assert.match(accepted.stdout, /^↻ test\/recordings\/fan\.jsonl .* — accepted$/m);
  const after = await inDir(["test"]);
  assert.equal(after.code, 0, after.stdout + after.stderr);
  assert.match(after.stdout, /^✔ test\/recordings\/fan\.jsonl/m);
});
