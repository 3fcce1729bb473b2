// `sdk dev --record FILE` records the simulated board's session from its hello, as `sdk record` does.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { RecordingEntry, RecordingHeader } from "@sdk/protocol";
import { sdk, sdkLive, tempDir } from "./helpers.ts";

test("sdk dev --record writes the simulated board's session; an existing file needs --force", async (t) => {
  const home = tempDir(t, "sdk-devrec-home-");
  const work = tempDir(t, "sdk-devrec-work-");
  const init = await sdk(t, ["init", "recorded", "--no-link"], { home, cwd: work });
  assert.equal(init.code, 0, init.stderr);
  const dir = path.join(work, "recorded");
  const script = (level: number) => `import { DeviceScript, OnboardLED } from "@sdk/device";
export default class Main extends DeviceScript {
  async onDeviceConnect() {
    await this.env.DEVICE.gpioWrite(OnboardLED, ${level});
    this.env.DEVICE.emitState("led", ${level});
  }
}
`;
  fs.writeFileSync(path.join(dir, "src", "index.ts"), script(1));
  const file = path.join(dir, "test", "recordings", "session.jsonl");
  const env = { TMPDIR: tempDir(t, "sdk-devrec-tmp-") };
  const dev = sdkLive(t, ["dev", "--port", "0", "--record", file], { home, cwd: dir, env });
  // The recorder hears each event before sdk dev prints it.
  await dev.waitForOutput((s) => /state led = 1/.test(s.stdout), 30_000, "the script's state");
  // A redeploy on save goes on recording, and says so.
  fs.writeFileSync(path.join(dir, "src", "index.ts"), script(0));
  await dev.waitForOutput((s) => /state led = 0/.test(s.stdout), 30_000, "the new version's state");
  await dev.waitForOutput(
    (s) => /the recording in .*session\.jsonl goes on with v2/.test(s.stderr),
    30_000,
    "the warning that the recording goes on",
  );
  dev.child.kill("SIGINT");
  assert.equal((await dev.exited).code, 0, dev.stderr());
  assert.match(dev.stderr(), /recorded \d+ entries in [\d.]+ s to .*session\.jsonl/);

  const [first, ...rest] = fs.readFileSync(file, "utf8").trimEnd().split("\n");
  const header = RecordingHeader.parse(JSON.parse(first!));
  assert.equal(header.device.board, "pico_w");
  assert.equal(header.deploymentVersion, 1);
  const entries = rest.map((line) => RecordingEntry.parse(JSON.parse(line)));
  assert.deepEqual(
    entries.map((e) => e.kind),
    ["connect", "command", "state", "command", "state"],
  );
  const command = entries[1] as Extract<RecordingEntry, { kind: "command" }>;
  assert.equal(command.command, "gpio_write");
  assert.deepEqual(command.args, { pin: "LED", value: 1 });
  assert.deepEqual(command.result, { ok: true, value: null });

  const refused = await sdk(t, ["dev", "--port", "0", "--record", file], { home, cwd: dir, env });
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /session\.jsonl exists: pass --force to overwrite it/);
});
