// The replay engine behind `sdk test`, in process: the virtual clock, command answers from the
// recording, the comparison and the accepted recording.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { RecordingEntry } from "@sdk/protocol";
import { acceptedText, checkRecording } from "../src/replay/check.ts";
import type { Step } from "../src/replay/compare.ts";
import { diffLines } from "../src/replay/format.ts";
import { isInput, parseRecording, RecordingFileError } from "../src/replay/recording-file.ts";
import { bundleOf, header, jsonl, project } from "./replay-helpers.ts";

const ticker = `import { DeviceScript } from "@sdk/device";
export default class Ticker extends DeviceScript {
  onDeviceConnect() {
    let n = 0;
    setInterval(() => this.env.DEVICE.emitState("tick", ++n), 1000);
  }
}`;

test("virtual clock: a 1000 ms interval over a 10 s recording emits 10 states at 1 s … 10 s, and an hour's 3600", async (t) => {
  const script = await bundleOf(project(t, ticker));
  const session = (seconds: number): RecordingEntry[] => [
    { t: 0, kind: "connect", board: "pico_w", firmware: "1.0.0" },
    { t: seconds * 1000, kind: "disconnect", reason: "closed" },
  ];
  const check = await checkRecording(parseRecording("ten.jsonl", jsonl(session(10))), script);
  const states = check.run.timeline.filter((e) => e.kind === "state");
  assert.deepEqual(
    states.map((s) => [s.t, s.value]),
    Array.from({ length: 10 }, (_, i) => [(i + 1) * 1000, i + 1]),
  );
  assert.equal(check.ok, false, "the recording had no states");
  assert.equal(check.differences, 10);

  // An hour of timers runs without waiting an hour (the test's own timeout would end it).
  const hour = await checkRecording(parseRecording("hour.jsonl", jsonl(session(3600))), script);
  assert.equal(hour.run.timeline.filter((e) => e.kind === "state").length, 3600);

  // Long enough to be compared entry by entry: every tick recorded one higher is one change.
  const ticks: RecordingEntry[] = Array.from({ length: 2000 }, (_, i) => ({
    t: (i + 1) * 1000,
    kind: "state",
    entityId: "tick",
    value: i + 2,
  }));
  const [connect, disconnect] = session(2000) as [RecordingEntry, RecordingEntry];
  const shifted = await checkRecording(
    parseRecording("shifted.jsonl", jsonl([connect, ...ticks, disconnect])),
    script,
  );
  assert.equal(shifted.differences, 2000);
  assert.ok(shifted.steps.every((s) => s.op === "changed"));
});

test("commands are answered from the recording: the n-th of a type gets the n-th answer of that type; one more fails with not_recorded", async (t) => {
  const script = await bundleOf(
    project(
      t,
      `import { DeviceScript } from "@sdk/device";
export default class Reader extends DeviceScript {
  async onMessage(msg) {
    if (msg.type !== "read") return;
    try {
      const level = await this.env.DEVICE.gpioRead(3);
      const celsius = await this.env.DEVICE.readTemperature();
      this.env.DEVICE.emitState("reading", { level, celsius });
    } catch (e) {
      this.env.DEVICE.emitState("failed", e.code);
    }
  }
}`,
    ),
  );
  const read = (t: number): RecordingEntry => ({ t, kind: "message", message: { type: "read" } });
  const temperature = (t: number, celsius: number): RecordingEntry => ({
    t,
    kind: "command",
    command: "temperature_read",
    args: {},
    result: { ok: true, value: { celsius } },
  });
  const gpio = (t: number, value: number): RecordingEntry => ({
    t,
    kind: "command",
    command: "gpio_read",
    args: { pin: 3 },
    result: { ok: true, value: { value } },
  });
  const recording = parseRecording(
    "reads.jsonl",
    jsonl([
      { t: 0, kind: "connect", board: "pico_w", firmware: "1.0.0" },
      read(100),
      gpio(101, 1),
      temperature(110, 20.5),
      { t: 111, kind: "state", entityId: "reading", value: { level: 1, celsius: 20.5 } },
      read(200),
      gpio(201, 0),
      {
        t: 210,
        kind: "command",
        command: "temperature_read",
        args: {},
        result: { ok: false, code: "device_timeout", message: "the device did not answer in time" },
      },
      { t: 211, kind: "state", entityId: "failed", value: "device_timeout" },
      read(300),
    ]),
  );
  const check = await checkRecording(recording, script);
  const outputs = check.run.timeline.filter(
    (e) => e.kind !== "log" && e.kind !== "message" && e.kind !== "connect",
  );
  assert.deepEqual(
    outputs.map((e) => (e.kind === "state" ? [e.t, e.entityId, e.value] : [e.t, e.kind])),
    [
      [100, "command"],
      [100, "command"],
      [100, "reading", { level: 1, celsius: 20.5 }],
      [200, "command"],
      [200, "command"],
      [200, "failed", "device_timeout"],
      [300, "command"],
      [300, "failed", "not_recorded"],
    ],
  );
  assert.equal(check.run.unanswered.length, 1);
  assert.equal(check.run.unanswered[0]!.command, "gpio_read");
  assert.match(
    check.run.unanswered[0]!.result.ok ? "" : check.run.unanswered[0]!.result.message,
    /no answer for a 3rd gpio_read command/,
  );
  assert.equal(check.ok, false, "a command without an answer is a divergence");
  assert.deepEqual(
    diffLines(check.steps).lines.map((l) => `${l.sign} ${l.text}`),
    [
      '  state failed "device_timeout" at 0.20 s',
      "+ command gpio_read {pin:3} at 0.30 s",
      '+ state failed "not_recorded" at 0.30 s',
    ],
  );
});

test("a changed threshold: the diff names the extra command and the changed state; the accepted recording then passes", async (t) => {
  const script = (threshold: number) => `import { DeviceScript } from "@sdk/device";
export default class Fan extends DeviceScript {
  async onMessage(msg) {
    if (msg.type !== "reading") return;
    const hot = msg.celsius > ${threshold};
    if (hot) await this.env.DEVICE.gpioWrite(2, 1);
    this.env.DEVICE.emitState("hot", hot);
  }
}`;
  const recording = parseRecording(
    "fan.jsonl",
    jsonl([
      { t: 0, kind: "connect", board: "pico_w", firmware: "1.0.0" },
      { t: 1200, kind: "message", message: { type: "reading", celsius: 25 } },
      { t: 1201, kind: "state", entityId: "hot", value: false },
      { t: 2400, kind: "message", message: { type: "reading", celsius: 35 } },
      {
        t: 2401,
        kind: "command",
        command: "gpio_write",
        args: { pin: 2, value: 1 },
        result: { ok: true, value: null },
      },
      { t: 2420, kind: "state", entityId: "hot", value: true },
    ]),
  );
  const same = await checkRecording(recording, await bundleOf(project(t, script(30))));
  assert.equal(same.ok, true, JSON.stringify(same.steps.filter((s) => s.op !== "same")));

  const lower = await bundleOf(project(t, script(20)));
  const changed = await checkRecording(recording, lower);
  assert.equal(changed.ok, false);
  // The second reading's gpio_write has no recorded answer now (the recording had one gpio_write,
  // the first reading takes it): it fails with not_recorded, so `hot` is not confirmed.
  assert.deepEqual(
    diffLines(changed.steps, recording.entries.filter(isInput)).lines.map((l) => `${l.sign} ${l.text}`),
    [
      '@ message {type:"reading",celsius:25} at 1.20 s',
      "+ command gpio_write {pin:2,value:1} at 1.20 s",
      "~ state hot: recorded false, now true at 1.20 s",
      '@ message {type:"reading",celsius:35} at 2.40 s',
      "  command gpio_write {pin:2,value:1} at 2.40 s",
      "- state hot true at 2.42 s",
    ],
  );
  assert.deepEqual(
    changed.errors.map((e) => e.message),
    ["SdkError: the recording has no answer for a 2nd gpio_write command"],
  );
  assert.equal(changed.run.unanswered.length, 1);

  const accepted = parseRecording("fan.jsonl", acceptedText(changed));
  assert.deepEqual(accepted.header, header);
  assert.deepEqual(
    accepted.entries.filter((e) => e.kind === "message").map((e) => e.t),
    [1200, 2400],
    "the inputs are kept",
  );
  const commands = accepted.entries.filter((e) => e.kind === "command");
  assert.deepEqual(
    commands.map((c) => c.result),
    [
      { ok: true, value: null },
      {
        ok: false,
        code: "not_recorded",
        message: "the recording has no answer for a 2nd gpio_write command",
      },
    ],
    "the recorded answer is kept; the new command is saved failing",
  );
  const again = await checkRecording(accepted, lower);
  assert.equal(
    again.ok,
    true,
    JSON.stringify({ steps: again.steps.filter((s) => s.op !== "same"), errors: again.errors }),
  );
});

test("a script error the recording did not have fails the replay; a script that does not load is reported", async (t) => {
  const recording = parseRecording(
    "boom.jsonl",
    jsonl([
      { t: 0, kind: "connect", board: "pico_w", firmware: "1.0.0" },
      { t: 500, kind: "message", message: { type: "boom" } },
    ]),
  );
  const throwing = await bundleOf(
    project(
      t,
      `import { DeviceScript } from "@sdk/device";
export default class Boom extends DeviceScript {
  onMessage(msg) { if (msg.type === "boom") throw new Error("sensor missing"); }
}`,
    ),
  );
  const check = await checkRecording(recording, throwing);
  assert.equal(check.ok, false);
  assert.equal(check.differences, 0);
  assert.deepEqual(
    check.errors.map((e) => [e.t, e.kind, e.message.split("\n")[0]]),
    [[500, "error", "Error: sensor missing"]],
  );
  // Accepted, the error is in the recording's log and no longer new.
  const accepted = await checkRecording(parseRecording("boom.jsonl", acceptedText(check)), throwing);
  assert.equal(accepted.ok, true);

  const broken = await checkRecording(recording, { bundle: "export default 42;" });
  assert.equal(broken.ok, false);
  assert.match(broken.run.fatal ?? "", /^the script failed to load: /);
});

test("recording files: the header first, then entries; a wrong line names its number and field", () => {
  const good = jsonl([{ t: 0, kind: "connect", board: "pico_w", firmware: "1.0.0" }]);
  assert.equal(parseRecording("ok.jsonl", `${good}\n\n`).entries.length, 1, "blank lines are skipped");
  const wrong = (text: string) => {
    try {
      parseRecording("bad.jsonl", text);
    } catch (error) {
      assert.ok(error instanceof RecordingFileError);
      return error.message;
    }
    assert.fail("parsed");
  };
  assert.match(wrong(`${good}{"t":5,"kind":"message"}\n`), /^bad\.jsonl:3: message: /);
  assert.match(wrong(`${good}{"t":-1,"kind":"disconnect","reason":"x"}\n`), /^bad\.jsonl:3: t: /);
  assert.match(wrong(`${good}{"t":1,"kind":"teleport"}\n`), /^bad\.jsonl:3: kind: /);
  assert.match(wrong(`${good}{"t":1,\n`), /^bad\.jsonl:3: not JSON/);
  assert.match(wrong(`{"format":"sdk-recording","version":2}\n`), /^bad\.jsonl:1: version: .*header/);
  assert.match(wrong(""), /^bad\.jsonl:1: empty/);
});

test("timing is shown, not compared: a command recorded at its answer after a state, and a state earlier than recorded, still match", async (t) => {
  const script = await bundleOf(
    project(
      t,
      `import { DeviceScript } from "@sdk/device";
export default class Blink extends DeviceScript {
  onMessage(msg) {
    this.env.DEVICE.gpioWrite(2, 1);
    this.env.DEVICE.emitState("on", true);
    setTimeout(() => this.env.DEVICE.emitState("on", false), 500);
  }
}`,
    ),
  );
  const check = await checkRecording(
    parseRecording(
      "blink.jsonl",
      jsonl([
        { t: 0, kind: "connect", board: "pico_w", firmware: "1.0.0" },
        { t: 100, kind: "message", message: { type: "go" } },
        { t: 101, kind: "state", entityId: "on", value: true },
        {
          t: 130,
          kind: "command",
          command: "gpio_write",
          args: { pin: 2, value: 1 },
          result: { ok: true, value: null },
        },
        { t: 1100, kind: "state", entityId: "on", value: false },
      ]),
    ),
    script,
  );
  assert.equal(check.ok, true, JSON.stringify(check.steps.filter((s) => s.op !== "same")));
  assert.deepEqual(
    check.run.timeline.filter((e) => e.kind === "state").map((e) => e.t),
    [100, 600],
    "the timer ran at its own time",
  );
});

test("a recording that starts mid-session: the instance is created first, its onDeviceConnect is not compared", async (t) => {
  const script = await bundleOf(
    project(
      t,
      `import { DeviceScript } from "@sdk/device";
export default class Late extends DeviceScript {
  async onDeviceConnect() {
    await this.env.DEVICE.pinMode(2, "output");
    this.env.DEVICE.emitState("ready", true);
  }
  onMessage(msg) { this.env.DEVICE.emitState("last", msg.type); }
}`,
    ),
  );
  const check = await checkRecording(
    parseRecording(
      "late.jsonl",
      jsonl([
        { t: 300, kind: "message", message: { type: "ping" } },
        { t: 301, kind: "state", entityId: "last", value: "ping" },
      ]),
    ),
    script,
  );
  assert.equal(check.ok, true, JSON.stringify(check.steps.filter((s) => s.op !== "same")));
  assert.deepEqual(
    check.run.timeline.map((e) => e.kind),
    ["message", "state"],
  );
});

const quiet = `import { DeviceScript } from "@sdk/device";
export default class Quiet extends DeviceScript {}`;

test("a recording of 200,000 entries replays (the end of the recording is found without a spread)", async (t) => {
  const script = await bundleOf(project(t, quiet));
  const entries: RecordingEntry[] = [{ t: 0, kind: "connect", board: "pico_w", firmware: "1.0.0" }];
  for (let i = 1; i < 200_000; i++) entries.push({ t: i, kind: "log", level: "info", message: `line ${i}` });
  const check = await checkRecording({ file: "big.jsonl", header, entries }, script);
  assert.equal(check.run.fatal, null);
  assert.equal(check.ok, true);
});

test("diff lines: at most `max` are built, `total` counts them all; each stretch headed by its input", () => {
  const n = 100_000;
  const inputs: RecordingEntry[] = [];
  const steps: Step[] = [];
  for (let i = 0; i < n; i++) {
    inputs.push({ t: i * 10, kind: "message", message: { type: "m", i } });
    const state = (value: number) => ({ t: i * 10 + 1, kind: "state" as const, entityId: "s", value });
    steps.push({ op: "changed", recorded: state(i), now: state(i + 1) });
  }
  const { lines, total } = diffLines(steps, inputs, { max: 60 });
  assert.equal(lines.length, 60);
  assert.equal(total, 2 * n, "a heading and a change per input");
  assert.deepEqual(
    lines.slice(0, 4).map((l) => `${l.sign} ${l.text}`),
    [
      '@ message {type:"m",i:0} at 0.00 s',
      "~ state s: recorded 0, now 1 at 0.00 s",
      '@ message {type:"m",i:1} at 0.01 s',
      "~ state s: recorded 1, now 2 at 0.01 s",
    ],
  );
});

test("a bounded replay: t past 31 days is not a recording; a runaway interval stops at the fire budget", async (t) => {
  const connect: RecordingEntry = { t: 0, kind: "connect", board: "pico_w", firmware: "1.0.0" };
  assert.throws(
    () => parseRecording("far.jsonl", jsonl([connect, { t: 1e13, kind: "disconnect", reason: "x" }])),
    /^RecordingFileError: far\.jsonl:3: t: /,
  );
  const month = 31 * 24 * 60 * 60 * 1000;
  const recording = parseRecording(
    "month.jsonl",
    jsonl([connect, { t: month, kind: "disconnect", reason: "x" }]),
  );
  const script = await bundleOf(
    project(
      t,
      `import { DeviceScript } from "@sdk/device";
export default class Busy extends DeviceScript {
  onDeviceConnect() { let n = 0; setInterval(() => { n++; }, 1); }
}`,
    ),
  );
  const check = await checkRecording(recording, script, { fireBudget: 10_000 });
  assert.equal(check.ok, false);
  assert.match(
    check.run.fatal ?? "",
    /^timers fired more than 10,000 times \(by [\d.]+ s on the virtual clock\)/,
  );
});

test("a recording without device inputs fails with a clear message", async (t) => {
  const script = await bundleOf(project(t, quiet));
  const check = await checkRecording(
    parseRecording("outputs.jsonl", jsonl([{ t: 5, kind: "state", entityId: "x", value: 1 }])),
    script,
  );
  assert.equal(check.ok, false);
  assert.equal(
    check.run.fatal,
    "the recording has no device inputs (connect, message, disconnect): nothing to replay",
  );
});

test("answers go by type and arguments first: an extra adc_read on another pin does not shift the later answers", async (t) => {
  const script = await bundleOf(
    project(
      t,
      `import { DeviceScript } from "@sdk/device";
export default class Adc extends DeviceScript {
  async onMessage(msg) {
    if (msg.type !== "read") return;
    if (msg.extra) await this.env.DEVICE.adcRead(27);
    const { volts } = await this.env.DEVICE.adcRead(26);
    this.env.DEVICE.emitState("volts", volts);
  }
}`,
    ),
  );
  const adc = (t: number, pin: number, volts: number): RecordingEntry => ({
    t,
    kind: "command",
    command: "adc_read",
    args: { pin },
    result: { ok: true, value: { volts, raw: 0 } },
  });
  const recording = parseRecording(
    "adc.jsonl",
    jsonl([
      { t: 0, kind: "connect", board: "pico_w", firmware: "1.0.0" },
      { t: 100, kind: "message", message: { type: "read", extra: true } },
      adc(101, 26, 1.1),
      { t: 102, kind: "state", entityId: "volts", value: 1.1 },
      { t: 200, kind: "message", message: { type: "read" } },
      adc(201, 26, 2.2),
      { t: 202, kind: "state", entityId: "volts", value: 2.2 },
    ]),
  );
  const check = await checkRecording(recording, script);
  assert.deepEqual(
    check.run.timeline.filter((e) => e.kind === "state").map((e) => (e as { value: unknown }).value),
    [1.1, 2.2],
  );
  const reads = check.run.timeline.flatMap((e) => (e.kind === "command" ? [e] : []));
  assert.deepEqual(
    reads.map((e) => [e.args.pin, e.result]),
    [
      [27, { ok: true, value: { volts: 1.1, raw: 0 } }],
      [26, { ok: true, value: { volts: 1.1, raw: 0 } }],
      [26, { ok: true, value: { volts: 2.2, raw: 0 } }],
    ],
    "a read the recording lacks gets the n-th answer of its type, still free for its own",
  );
  assert.deepEqual(check.run.unanswered, []);
});

test("a recording whose last line was cut off (the recorder killed) loads without it, with a warning", () => {
  const connect: RecordingEntry = { t: 0, kind: "connect", board: "pico_w", firmware: "1.0.0" };
  const cut = parseRecording("cut.jsonl", `${jsonl([connect])}{"t":12,"kind":"mess`);
  assert.equal(cut.entries.length, 1);
  assert.equal(cut.dropped, "cut.jsonl:3: its last line is cut off (no newline, not JSON): left out");
  assert.equal(parseRecording("whole.jsonl", jsonl([connect])).dropped, undefined);
});
