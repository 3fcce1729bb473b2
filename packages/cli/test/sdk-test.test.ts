// `sdk test` as a user runs it: the real binary, a project on disk, exit codes for CI.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { docsDirUrl } from "@sdk/docs";
import type { RecordingEntry } from "@sdk/protocol";
import { sdk, tempDir } from "./helpers.ts";
import { jsonl, project } from "./replay-helpers.ts";

const fan = (threshold: number) => `import { DeviceScript } from "@sdk/device";
export default class Fan extends DeviceScript {
  async onMessage(msg) {
    if (msg.type !== "reading") return;
    const hot = msg.celsius > ${threshold};
    if (hot) await this.env.DEVICE.gpioWrite(2, 1);
    this.env.DEVICE.emitState("hot", hot);
  }
}`;

const session: RecordingEntry[] = [
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
];

test("sdk test: a matching recording passes; a changed threshold exits 1 with a diff; --update accepts it", async (t) => {
  const home = tempDir(t, "sdk-test-home-");
  const dir = project(t, fan(30), { "fan.jsonl": jsonl(session) });
  const run = (args: string[]) => sdk(t, ["test", ...args], { home, cwd: dir });

  const passing = await run([]);
  assert.equal(passing.code, 0, passing.stdout + passing.stderr);
  assert.match(
    passing.stdout,
    /^✔ test\/recordings\/fan\.jsonl \(3 inputs, 1 command, 2 states, 0 sends\)$/m,
  );
  assert.match(passing.stdout, /^1 recording: 1 passed$/m);

  fs.writeFileSync(path.join(dir, "src", "index.ts"), fan(20));
  const diverging = await run([]);
  assert.equal(diverging.code, 1, diverging.stderr);
  assert.match(
    diverging.stdout,
    /^✖ test\/recordings\/fan\.jsonl .*: 3 differences, 1 script error, 1 command not recorded$/m,
  );
  for (const line of [
    '    @ message {type:"reading",celsius:25} at 1.20 s',
    "    + command gpio_write {pin:2,value:1} at 1.20 s",
    "    ~ state hot: recorded false, now true at 1.20 s",
    "    - state hot true at 2.42 s",
    "    ! script error at 2.40 s: SdkError: the recording has no answer for a 2nd gpio_write command",
  ])
    assert.ok(diverging.stdout.includes(`${line}\n`), `${line}\nin:\n${diverging.stdout}`);
  assert.match(diverging.stdout, /accept it with: sdk test --update/);

  const json = await run(["--json"]);
  assert.equal(json.code, 1);
  const report = JSON.parse(json.stdout);
  assert.equal(report.ok, false);
  assert.deepEqual(
    report.recordings[0].differences.map((d: { op: string }) => d.op),
    ["added", "changed", "removed"],
  );

  const before = fs.readFileSync(path.join(dir, "test", "recordings", "fan.jsonl"), "utf8");
  const updated = await run(["--update"]);
  assert.equal(updated.code, 0, updated.stdout + updated.stderr);
  assert.match(updated.stdout, /^↻ test\/recordings\/fan\.jsonl .* — accepted$/m);
  assert.match(updated.stdout, /1 command had no recorded answer: saved as failing with not_recorded/);
  const after = fs.readFileSync(path.join(dir, "test", "recordings", "fan.jsonl"), "utf8");
  assert.equal(after.split("\n")[0], before.split("\n")[0], "the header is kept");

  const again = await run([]);
  assert.equal(again.code, 0, again.stdout);
  assert.match(again.stdout, /^✔ test\/recordings\/fan\.jsonl/m);
});

test("sdk test: a file that is not a recording exits 2 naming the line and field; no recordings exits 2", async (t) => {
  const home = tempDir(t, "sdk-test-home-");
  const good = jsonl(session.slice(0, 2));
  const dir = project(t, fan(30), {
    "bad.jsonl": `${good}{"t":5,"kind":"message"}\n`,
  });
  const bad = await sdk(t, ["test"], { home, cwd: dir });
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /Not a recording: test\/recordings\/bad\.jsonl:4: message: /);

  const json = await sdk(t, ["test", "test/recordings/bad.jsonl", "--json"], { home, cwd: dir });
  assert.equal(json.code, 2);
  assert.equal(JSON.parse(json.stdout).error.code, "usage");

  const empty = project(t, fan(30));
  const none = await sdk(t, ["test"], { home, cwd: empty });
  assert.equal(none.code, 2);
  assert.match(none.stderr, /No recordings in .*test\/recordings/);
});

test("sdk init's project passes sdk test as generated, with a CI workflow; the worked example of docs/scripts.md is what it prints", async (t) => {
  const home = tempDir(t, "sdk-test-home-");
  const work = tempDir(t, "sdk-test-work-");
  const init = await sdk(t, ["init", "lamp", "--no-link"], { home, cwd: work });
  assert.equal(init.code, 0, init.stderr);
  assert.match(init.stdout, /test\/recordings\/example\.jsonl is a recorded session: sdk test replays it/);
  const dir = path.join(work, "lamp");
  const workflow = fs.readFileSync(path.join(dir, ".github", "workflows", "sdk-test.yml"), "utf8");
  assert.match(workflow, /run: sdk test/);
  const cliVersion = JSON.parse(fs.readFileSync(new URL("../package.json", import.meta.url), "utf8")).version;
  assert.ok(workflow.includes(`run: npm install -g @sdk/cli@${cliVersion}\n`), workflow);

  const result = await sdk(t, ["test"], { home, cwd: dir });
  assert.equal(result.code, 0, result.stdout + result.stderr);
  assert.match(
    result.stdout,
    /^✔ test\/recordings\/example\.jsonl \(5 inputs, 6 commands, 6 states, 0 sends\)$/m,
  );

  // The worked example of docs/scripts.md: its change to the template, and the output it shows.
  const doc = fs.readFileSync(new URL("scripts.md", docsDirUrl), "utf8");
  const block = (mark: string) => {
    const found = new RegExp(`<!-- sdk test example: ${mark} -->\\n\`\`\`\\w+\\n([\\s\\S]*?)\\n\`\`\``).exec(
      doc,
    );
    assert.ok(found, `docs/scripts.md has the sdk test example's ${mark}`);
    return found[1]!.split("\n");
  };
  const side = (lines: string[], sign: string) =>
    lines
      .filter((l) => l[0] === sign || l[0] === " ")
      .map((l) => l.slice(1))
      .join("\n");
  const change = block("change");
  const script = path.join(dir, "src", "index.ts");
  const source = fs.readFileSync(script, "utf8");
  assert.ok(source.includes(side(change, "-")), "the example's change applies to the template");
  fs.writeFileSync(script, source.replace(side(change, "-"), side(change, "+")));
  const changed = await sdk(t, ["test"], { home, cwd: dir });
  assert.equal(changed.code, 1);
  const output = block("output");
  assert.equal(output[0], "$ sdk test");
  assert.equal(changed.stdout.trimEnd(), output.slice(1).join("\n"));
});

test("sdk test --env-file gives the script its env vars", async (t) => {
  const home = tempDir(t, "sdk-test-home-");
  const script = fan(30).replace("msg.celsius > 30", "msg.celsius > Number(this.env.THRESHOLD ?? 30)");
  const dir = project(t, script, { "fan.jsonl": jsonl(session) });
  const run = (args: string[]) => sdk(t, ["test", ...args], { home, cwd: dir });
  assert.equal((await run([])).code, 0, "no env vars: the default threshold");
  fs.writeFileSync(path.join(dir, "replay.env"), "# a lower threshold\nTHRESHOLD=20\n");
  const lower = await run(["--env-file", "replay.env"]);
  assert.equal(lower.code, 1, lower.stderr);
  assert.ok(lower.stdout.includes("    ~ state hot: recorded false, now true at 1.20 s\n"), lower.stdout);
  fs.writeFileSync(path.join(dir, "bad.env"), "threshold 20\n");
  const bad = await run(["--env-file", "bad.env"]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /bad\.env:1: expected NAME=value/);
});

test("sdk test: dates and Math.random() replay alike: after --update the recording passes, twice; a cut-off last line is left out with a warning", async (t) => {
  const home = tempDir(t, "sdk-test-home-");
  const stamp = `import { DeviceScript } from "@sdk/device";
export default class Stamp extends DeviceScript {
  onMessage(msg) {
    this.env.DEVICE.emitState("stamp", { now: Date.now(), iso: new Date().toISOString(), dice: Math.random() });
    setTimeout(() => this.env.DEVICE.emitState("later", Date.now()), 25);
  }
}`;
  const entries: RecordingEntry[] = [
    { t: 0, kind: "connect", board: "pico_w", firmware: "1.0.0" },
    { t: 1200, kind: "message", message: { type: "tick" } },
    { t: 5000, kind: "message", message: { type: "tick" } },
  ];
  const file = path.join("test", "recordings", "stamp.jsonl");
  const dir = project(t, stamp, { "stamp.jsonl": jsonl(entries) });
  const run = (args: string[]) => sdk(t, ["test", ...args], { home, cwd: dir });

  const updated = await run(["--update"]);
  assert.equal(updated.code, 0, updated.stdout + updated.stderr);
  assert.match(updated.stdout, /— accepted$/m);
  const accepted = fs.readFileSync(path.join(dir, file), "utf8");
  const start = Date.parse("2026-11-24T06:00:00.000Z"); // the helpers' recordedAt
  const states = accepted
    .trimEnd()
    .split("\n")
    .map((line) => JSON.parse(line))
    .filter((e) => e.kind === "state");
  assert.deepEqual(
    states.map((s) => (s.entityId === "stamp" ? s.value.now : s.value)),
    [start + 1200, start + 1225, start + 5000, start + 5025],
    "the recording's start plus the virtual clock",
  );
  assert.equal(states[0].value.iso, "2026-11-24T06:00:01.200Z");
  assert.deepEqual(
    fs.readdirSync(path.join(dir, "test", "recordings")),
    ["stamp.jsonl"],
    "no temp file left",
  );

  for (let i = 0; i < 2; i++) {
    const again = await run([]);
    assert.equal(again.code, 0, again.stdout + again.stderr);
    assert.match(again.stdout, /^✔ test\/recordings\/stamp\.jsonl/m);
  }

  // The recorder was killed while writing its last line: it is left out, with a warning.
  fs.appendFileSync(path.join(dir, file), '{"t":6000,"kind":"mess');
  const cut = await run([]);
  assert.equal(cut.code, 0, cut.stdout + cut.stderr);
  assert.match(cut.stderr, /stamp\.jsonl:\d+: its last line is cut off \(no newline, not JSON\): left out/);
});
