// `sdk record` against a real server process: a simulated board's session (its hello, a message,
// the script's command with the board's answer, the state it emits, its log line, the disconnect)
// ends up in a JSON Lines file that parses with the recording schemas.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { type Device, RecordingEntry, RecordingHeader, type WatchEvent } from "@sdk/protocol";
import { SimulatedDevice } from "@sdk/simulator";
import { deployScript, waitUntil } from "@sdk/test-helpers";
import { Output } from "../src/output.ts";
import { openRecordingFile, reportRecording, SessionRecorder } from "../src/recorder.ts";
import { sdk, sdkLive, signedInProject, tempDir } from "./helpers.ts";

const script = `
import { DeviceScript, GP26 } from "@sdk/device";
export default class Recorded extends DeviceScript {
  async onMessage(msg) {
    if (msg.type !== "sample") return;
    const { volts } = await this.env.DEVICE.adcRead(GP26);
    this.env.DEVICE.emitState("voltage", volts);
    console.log("sampled " + volts);
  }
}
`;

test("sdk record writes the device's session as a recording; refuses an existing file and an unknown device", async (t) => {
  const { url, home, work, client, project, run } = await signedInProject(t, "recorded", "sdk-record");
  const deployment = await deployScript(t, client, project.id, script);
  assert.equal(deployment.status, "active");
  const { device, credentials } = await client.api.createDevice({
    params: { projectId: project.id },
    body: { name: "bench", board: "pico_w" },
  });
  const ids = { projectId: project.id, deviceId: device.id };
  const board = new SimulatedDevice({
    server: new URL(url).host,
    deviceId: credentials.deviceId,
    secret: credentials.secret,
    board: "pico_w",
    reconnect: false,
  });
  t.after(() => board.stop());
  board.setVoltage(26, 1.65);

  const file = path.join(work, "test", "recordings", "bench.jsonl");
  const recording = sdkLive(t, ["record", "--device", device.id, file, "--project", project.id], {
    home,
    cwd: work,
  });
  await recording.waitForOutput(
    (s) => s.stderr.includes("waiting for the device to connect"),
    20_000,
    "the recording to start",
  );

  board.start();
  await recording.waitForOutput((s) => s.stderr.includes("device connected (pico_w"), 20_000, "the connect");
  board.sendEvent("sample");
  await waitUntil(
    async () => (await client.api.getDeviceState({ params: ids })).some((v) => v.entityId === "voltage"),
    20_000,
    "the script's state",
  );
  await waitUntil(
    async () =>
      (await client.api.listDeviceLogs({ params: ids, query: { limit: 50 } })).some((l) =>
        l.message.startsWith("sampled "),
      ),
    20_000,
    "the script's log line",
  );
  // A user's command is not part of the recording (only the script's are).
  await client.api.sendDeviceCommand({ params: ids, body: { type: "gpio_read", args: { pin: 15 } } });
  await board.stop();
  // Events reach the recorder in order: once it saw the disconnect, it has everything before.
  await recording.waitForOutput((s) => s.stderr.includes("device disconnected"), 20_000, "the disconnect");
  recording.child.kill("SIGINT");
  const exit = await recording.exited;
  assert.equal(exit.code, 0, recording.stderr());
  assert.match(recording.stderr(), /recorded \d+ entries in [\d.]+ s to .*bench\.jsonl/);
  assert.match(recording.stderr(), /1 command sent by users \(REST, MCP\) is not in the recording/);

  const [first, ...rest] = fs.readFileSync(file, "utf8").trimEnd().split("\n");
  const header = RecordingHeader.parse(JSON.parse(first!));
  assert.equal(header.device.id, device.id);
  assert.equal(header.device.name, "bench");
  assert.equal(header.device.board, "pico_w");
  assert.ok(header.device.firmware.length > 0);
  assert.equal(header.projectId, project.id);
  assert.equal(header.deploymentVersion, deployment.version);
  const entries = rest.map((line) => RecordingEntry.parse(JSON.parse(line)));
  const byKind = (kind: string) => entries.filter((e) => e.kind === kind);
  assert.deepEqual(
    entries.map((e) => e.kind).filter((k) => k !== "log"),
    ["connect", "message", "command", "state", "disconnect"],
  );
  const [connect] = byKind("connect") as Extract<RecordingEntry, { kind: "connect" }>[];
  assert.equal(connect!.board, "pico_w");
  assert.equal(connect!.firmware, header.device.firmware);
  const [message] = byKind("message") as Extract<RecordingEntry, { kind: "message" }>[];
  assert.deepEqual(message!.message, { type: "sample" });
  const [command] = byKind("command") as Extract<RecordingEntry, { kind: "command" }>[];
  assert.equal(command!.command, "adc_read");
  assert.deepEqual(command!.args, { pin: 26 });
  assert.ok(command!.result.ok);
  const volts = (command!.result as { value: { volts: number } }).value.volts;
  const [state] = byKind("state") as Extract<RecordingEntry, { kind: "state" }>[];
  assert.deepEqual([state!.entityId, state!.value], ["voltage", volts]);
  assert.ok(
    entries.some((e) => e.kind === "log" && e.message === `sampled ${volts}`),
    "the script's log line",
  );
  const times = entries.map((e) => e.t);
  assert.deepEqual(
    times,
    [...times].sort((a, b) => a - b),
    "t never goes back",
  );

  const again = await run(["record", "--device", device.id, file, "--seconds", "1"]);
  assert.equal(again.code, 1);
  assert.match(again.stderr, /bench\.jsonl exists: pass --force to overwrite it/);
  const unknown = await run(["record", "--device", "dev_aaaaaaaaaaaaaaaaaaaa", path.join(work, "x.jsonl")]);
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /No device dev_aaaaaaaaaaaaaaaaaaaa in project/);
  assert.ok(!fs.existsSync(path.join(work, "x.jsonl")), "no file for an unknown device");
  // --seconds stops it by itself; the device stays offline: a header and no entries.
  const quiet = path.join(work, "quiet.jsonl");
  const short = await run(["record", "--device", device.id, quiet, "--seconds", "0.5", "--json"]);
  assert.equal(short.code, 0, short.stderr);
  assert.equal(JSON.parse(short.stdout).entries, 0);
  const lines = fs.readFileSync(quiet, "utf8").trimEnd().split("\n");
  assert.equal(lines.length, 1);
  assert.equal(RecordingHeader.parse(JSON.parse(lines[0]!)).device.firmware, header.device.firmware);
  const usage = await sdk(t, ["record", file], { home, cwd: work });
  assert.equal(usage.code, 2);
});

/** An Output whose notices are kept, not printed. */
class Captured extends Output {
  readonly notices: string[] = [];
  constructor() {
    super({ json: false, env: { NO_COLOR: "1" } });
  }
  override info(text: string): void {
    this.notices.push(text);
  }
}

test("after the watch reconnects, a device that went offline or came back in the gap gets a disconnect/connect at the snapshot's time; the recording is incomplete", (t) => {
  const dir = tempDir(t, "sdk-record-gap-");
  const file = path.join(dir, "gap.jsonl");
  const out = new Captured();
  const recorder = new SessionRecorder(openRecordingFile(file, false), {
    file,
    out,
    projectId: "prj_test",
    deploymentVersion: null,
  });
  const device: Device = {
    id: "dev_test",
    projectId: "prj_test",
    name: "bench",
    board: "pico_w",
    status: "offline",
    lastSeenAt: null,
    firmwareVersion: "1.0.0",
    firmwareUpdate: null,
    createdAt: "2026-11-24T06:00:00.000Z",
    updatedAt: "2026-11-24T06:00:00.000Z",
    tags: [],
  };
  const at = (ms: number) => new Date(Date.parse("2026-11-24T06:00:00.000Z") + ms).toISOString();
  let seq = 0;
  const snapshot = (ms: number, over: Partial<Device>): WatchEvent =>
    ({ type: "snapshot", seq: ++seq, at: at(ms), device: { ...device, ...over } }) as WatchEvent;
  recorder.handle(snapshot(0, {}));
  recorder.handle({
    type: "status",
    seq: ++seq,
    at: at(100),
    status: "online",
    board: "pico_w",
    firmware: "1.0.0",
  });
  // The watch drops; the device goes offline meanwhile.
  recorder.dropped();
  recorder.handle(snapshot(5000, { status: "offline" }));
  // It drops again; the device comes back meanwhile.
  recorder.dropped();
  recorder.handle(snapshot(9000, { status: "online" }));
  // And again; the device reconnected with other firmware (updated) meanwhile.
  recorder.dropped();
  recorder.handle(snapshot(12_000, { status: "online", firmwareVersion: "1.1.0" }));
  // And again: nothing changed, nothing is added.
  recorder.dropped();
  recorder.handle(snapshot(15_000, { status: "online", firmwareVersion: "1.1.0" }));
  const summary = recorder.finish();
  assert.equal(summary.incomplete, true);

  const entries = fs
    .readFileSync(file, "utf8")
    .trimEnd()
    .split("\n")
    .slice(1)
    .map((line) => RecordingEntry.parse(JSON.parse(line)));
  assert.deepEqual(
    entries.map((e) => [
      e.t,
      e.kind,
      e.kind === "connect" ? e.firmware : e.kind === "disconnect" ? e.reason : "",
    ]),
    [
      [100, "connect", "1.0.0"],
      [5000, "disconnect", "offline (missed while the watch reconnected)"],
      [9000, "connect", "1.0.0"],
      [12_000, "disconnect", "offline (missed while the watch reconnected)"],
      [12_000, "connect", "1.1.0"],
    ],
  );

  reportRecording(out, summary);
  assert.ok(
    out.notices.some((n) => /gap\.jsonl is incomplete: events were missed while recording/.test(n)),
    out.notices.join("\n"),
  );
});
