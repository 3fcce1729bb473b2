// `sdk devices` (list --tag, tag add/remove/set, create --from) and `sdk logs --tail --tag`, the real
// CLI process against a real server process.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { type TestContext, test } from "node:test";
import { SimulatedDevice } from "@sdk/simulator";
import { deployScript, waitUntil } from "@sdk/test-helpers";
import { sdk, sdkBin, sdkLive, signedInProject } from "./helpers.ts";

const signedIn = (t: TestContext) => signedInProject(t, "fleet", "sdk-devices");

test("devices create --from CSV: all or nothing with the bad rows named; the credentials file is 0600 and connects", async (t) => {
  const s = await signedIn(t);
  const bad = path.join(s.work, "bad.csv");
  fs.writeFileSync(bad, "name,board,tags\nshelf-1,pico_w,shelf\n,pico_w,\nshelf-3,esp32,Shelf\n");
  const refused = await s.run([
    "devices",
    "create",
    "--from",
    bad,
    "--out",
    path.join(s.work, "bad-creds.json"),
  ]);
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /No device was added/);
  assert.match(refused.stderr, /line 3 \(name\)/, "file lines: the header is line 1");
  assert.match(refused.stderr, /line 4 \(board\)/);
  assert.match(refused.stderr, /line 4 \(tags\.0\)/);
  assert.equal(fs.existsSync(path.join(s.work, "bad-creds.json")), false);
  assert.deepEqual(await s.client.api.listDevices({ params: { projectId: s.project.id } }), []);

  const good = path.join(s.work, "devices.csv");
  fs.writeFileSync(
    good,
    'name,board,tags\nshelf-1,pico_w,shelf batch-7\n"shelf, two",pico2_w,shelf\nspare,pico_w,\n',
  );
  const out = path.join(s.work, "creds.csv");
  const made = await s.run(["devices", "create", "--from", good, "--out", out]);
  assert.equal(made.code, 0, made.stderr);
  assert.match(made.stdout, /3 devices added; credentials written to/);
  assert.equal(fs.statSync(out).mode & 0o777, 0o600);
  const lines = fs.readFileSync(out, "utf8").trim().split("\n");
  assert.equal(lines[0], "device_id,name,board,tags,secret");
  assert.equal(lines.length, 4);
  const [deviceId, , , tags, secret] = lines[1]!.split(",");
  assert.equal(tags, "batch-7;shelf");
  assert.ok(secret && secret.length > 10);
  assert.match(lines[2]!, /^dev_\w+,"shelf, two",pico2_w,shelf,/);
  for (const line of lines.slice(1))
    assert.doesNotMatch(made.stdout + made.stderr, new RegExp(line.split(",").at(-1)!), "no secret printed");

  const again = await s.run(["devices", "create", "--from", good, "--out", out]);
  assert.equal(again.code, 1);
  assert.match(again.stderr, /already exists/);
  assert.match(again.stderr, /No device was added/);

  const board = new SimulatedDevice({
    server: new URL(s.url).host,
    deviceId: deviceId!,
    secret: secret!,
    reconnect: false,
  });
  t.after(() => board.stop());
  board.start();
  await board.waitFor("connected", 20_000);

  // JSON in, JSON out, secrets only when asked
  const json = path.join(s.work, "more.json");
  fs.writeFileSync(json, JSON.stringify([{ name: "extra", board: "pico_w", tags: ["spare"] }]));
  const jsonOut = path.join(s.work, "more-creds.json");
  const shown = await s.run([
    "devices",
    "create",
    "--from",
    json,
    "--out",
    jsonOut,
    "--json",
    "--show-secrets",
  ]);
  assert.equal(shown.code, 0, shown.stderr);
  const result = JSON.parse(shown.stdout);
  const file = JSON.parse(fs.readFileSync(jsonOut, "utf8"));
  assert.equal(result.credentialsFile, jsonOut);
  assert.equal(result.devices[0].secret, file.devices[0].secret);
  assert.deepEqual(file.devices[0].tags, ["spare"]);
});

test("devices list --tag and devices tag add/remove/set, by name or id, with --json and usage errors", async (t) => {
  const s = await signedIn(t);
  const a = await s.client.api.createDevice({
    params: { projectId: s.project.id },
    body: { name: "lamp", board: "pico_w" },
  });
  await s.client.api.createDevice({
    params: { projectId: s.project.id },
    body: { name: "fan", board: "pico_w" },
  });

  const added = await s.run(["devices", "tag", "add", "lamp", "kitchen", "floor-2"]);
  assert.equal(added.code, 0, added.stderr);
  assert.match(added.stdout, /lamp: floor-2 kitchen/);
  const set = await s.run(["devices", "tag", "set", "fan", "kitchen", "--json"]);
  assert.deepEqual(JSON.parse(set.stdout).tags, ["kitchen"]);
  const removed = await s.run(["devices", "tag", "remove", a.device.id, "floor-2"]);
  assert.equal(removed.code, 0, removed.stderr);

  const list = await s.run(["devices", "list", "--tag", "kitchen"]);
  assert.equal(list.code, 0, list.stderr);
  assert.match(list.stdout, /lamp.*kitchen/);
  assert.match(list.stdout, /fan.*kitchen/);
  const json = JSON.parse((await s.run(["devices", "list", "--json"])).stdout);
  assert.deepEqual(
    json.devices.map((d: { name: string; tags: string[] }) => [d.name, d.tags]),
    [
      ["lamp", ["kitchen"]],
      ["fan", ["kitchen"]],
    ],
  );
  const cleared = await s.run(["devices", "tag", "set", "fan"]);
  assert.match(cleared.stdout, /fan: no tags/);
  const none = await s.run(["devices", "list", "--tag", "garage"]);
  assert.match(none.stdout, /No device has the tag garage/);

  const badTag = await s.run(["devices", "tag", "add", "lamp", "Kitchen"]);
  assert.equal(badTag.code, 2);
  assert.match(badTag.stderr, /not a valid tag/);
  const noDevice = await s.run(["devices", "tag", "add", "nobody", "x"]);
  assert.equal(noDevice.code, 1);
  assert.match(noDevice.stderr, /No device named "nobody"/);
  const help = await sdk(t, ["devices", "tag", "--help"], { home: s.home, cwd: s.work });
  assert.match(help.stdout, /add\|remove\|set/);
  assert.match(help.stdout, /at most 16/);
});

test("logs --tail --tag streams only tagged devices and follows tag changes", async (t) => {
  const s = await signedIn(t);
  const make = async (name: string) => {
    const created = await s.client.api.createDevice({
      params: { projectId: s.project.id },
      body: { name, board: "pico_w" },
    });
    const board = new SimulatedDevice({
      server: new URL(s.url).host,
      deviceId: created.credentials.deviceId,
      secret: created.credentials.secret,
      reconnect: false,
    });
    t.after(() => board.stop());
    board.start();
    await board.waitFor("connected", 20_000);
    return { ...created, board };
  };
  const tagged = await make("tagged");
  const other = await make("other");
  await s.client.api.setDeviceTags({
    params: { projectId: s.project.id, deviceId: tagged.device.id },
    body: { tags: ["hall"] },
  });

  const tail = sdkLive(t, ["logs", "--tail", "--tag", "hall", "--project", s.project.id], {
    home: s.home,
    cwd: s.work,
  });
  await tail.waitForOutput(
    (o) => o.stderr.includes("Streaming logs of 1 device tagged hall"),
    20_000,
    "the stream",
  );
  other.board.sendLog("info", "from the other one (before)");
  tagged.board.sendLog("info", "from the tagged one");
  await tail.waitForOutput((o) => o.stdout.includes("from the tagged one"), 20_000, "the tagged line");

  await s.client.api.addDeviceTags({
    params: { projectId: s.project.id, deviceId: other.device.id },
    body: { tags: ["hall"] },
  });
  await tail.waitForOutput(
    (o) => o.stderr.includes(`${other.device.id} was tagged hall`),
    20_000,
    "the join",
  );
  other.board.sendLog("info", "from the other one (after)");
  await tail.waitForOutput((o) => o.stdout.includes("from the other one (after)"), 20_000, "the joined line");
  assert.doesNotMatch(tail.stdout(), /before/, "nothing of the other device before it had the tag");

  tail.child.kill("SIGINT");
  assert.equal((await tail.exited).code, 0);
});

/** Runs `sdk` with a file size limit of 0: every write to a regular file fails (EFBIG, like a full disk). */
function sdkNoFileSpace(args: string[], home: string, cwd: string) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn("sh", ["-c", 'ulimit -f 0 && exec "$@"', "sh", process.execPath, sdkBin, ...args], {
      cwd,
      env: { PATH: process.env.PATH ?? "", HOME: home },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => {
      stdout += d;
    });
    child.stderr.on("data", (d) => {
      stderr += d;
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

test("devices create --from: a credentials file that cannot be created stops it before any device is added; a failed write prints the secrets", async (t) => {
  const s = await signedIn(t);
  const list = path.join(s.work, "devices.csv");
  fs.writeFileSync(list, "name,board\nshelf-1,pico_w\nshelf-2,pico_w\n");
  const none = async () => (await s.client.api.listDevices({ params: { projectId: s.project.id } })).length;

  const noDir = await s.run([
    "devices",
    "create",
    "--from",
    list,
    "--out",
    path.join(s.work, "missing", "c.json"),
  ]);
  assert.equal(noDir.code, 1);
  assert.match(noDir.stderr, /Cannot create the credentials file .*missing.*No device was added/s);
  const existing = path.join(s.work, "taken.json");
  fs.writeFileSync(existing, "keep me");
  const taken = await s.run(["devices", "create", "--from", list, "--out", existing]);
  assert.equal(taken.code, 1);
  assert.match(taken.stderr, /already exists/);
  assert.equal(fs.readFileSync(existing, "utf8"), "keep me");
  assert.equal(await none(), 0, "nothing was created");

  // the server refuses the rows: the file made up front is gone again
  const bad = path.join(s.work, "bad.csv");
  fs.writeFileSync(bad, "name,board\nx,no_such_board\n");
  const refused = await s.run(["devices", "create", "--from", bad, "--out", path.join(s.work, "r.json")]);
  assert.equal(refused.code, 1);
  assert.equal(fs.existsSync(path.join(s.work, "r.json")), false);

  // every write fails after the devices were made: the secrets go to stdout, with a warning
  const out = path.join(s.work, "full.json");
  const full = await sdkNoFileSpace(
    ["devices", "create", "--from", list, "--out", out, "--project", s.project.id],
    s.home,
    s.work,
  );
  assert.equal(full.code, 1, full.stderr);
  assert.match(full.stderr, /Could not write the credentials to .*full\.json.*printed below/s);
  const printed = JSON.parse(full.stdout.slice(full.stdout.indexOf("{")));
  assert.equal(printed.devices.length, 2);
  assert.equal(fs.existsSync(out), false, "no partial file is left");
  const [first] = printed.devices;
  assert.ok(first.secret.length > 10);
  const board = new SimulatedDevice({
    server: new URL(s.url).host,
    deviceId: first.deviceId,
    secret: first.secret,
    reconnect: false,
  });
  t.after(() => board.stop());
  board.start();
  await board.waitFor("connected", 20_000);
});

test("devices create --from: CSV errors name the file line (header = line 1); an unterminated quote is refused", async (t) => {
  const s = await signedIn(t);
  const write = (name: string, text: string) => {
    const file = path.join(s.work, name);
    fs.writeFileSync(file, text);
    return file;
  };
  const create = (file: string) =>
    s.run(["devices", "create", "--from", file, "--out", path.join(s.work, `${path.basename(file)}.json`)]);

  const open = await create(
    write("open.csv", 'name,board\nshelf-1,pico_w\n"shelf-2,pico_w\nshelf-3,pico_w\n'),
  );
  assert.equal(open.code, 1);
  assert.match(open.stderr, /open\.csv line 3: a quoted field is never closed/);
  const after = await create(write("after.csv", 'name,board\n"shelf"-1,pico_w\n'));
  assert.equal(after.code, 1);
  assert.match(after.stderr, /after\.csv line 2: unexpected text after a closing quote/);
  const extra = await create(write("extra.csv", "name,board\nshelf, one,pico_w\n"));
  assert.equal(extra.code, 1);
  assert.match(extra.stderr, /extra\.csv line 2: 3 fields but the header names 2/);
  const header = await create(write("header.csv", "\nnaam,board\nx,pico_w\n"));
  assert.equal(header.code, 1);
  assert.match(header.stderr, /header\.csv line 2: the CSV header must name/);
  assert.deepEqual(await s.client.api.listDevices({ params: { projectId: s.project.id } }), []);

  // blank lines and a quoted field over two lines still give the right line to the server's complaint
  const shifted = await create(
    write("shifted.csv", 'name,board\n\n"two\nlines",pico_w\n\nok,pico_w\n,pico_w\n'),
  );
  assert.equal(shifted.code, 1);
  assert.match(shifted.stderr, /line 3 \(name\)/, "the record that starts on line 3 (a newline in a name)");
  assert.match(shifted.stderr, /line 7 \(name\)/);
  assert.doesNotMatch(shifted.stderr, /line 6/);

  // JSON has no useful line: the place in the list
  const json = await create(
    write("list.json", JSON.stringify([{ name: "a", board: "pico_w" }, { board: "pico_w" }])),
  );
  assert.equal(json.code, 1);
  assert.match(json.stderr, /row 2 \(name\)/);
});

/** Devices for the command and message tests: online ones are simulated boards that stay connected. */
async function fleet(t: TestContext, s: Awaited<ReturnType<typeof signedIn>>) {
  const add = async (name: string, tags: string[], online: boolean) => {
    const created = await s.client.api.createDevice({
      params: { projectId: s.project.id },
      body: { name, board: "pico_w" },
    });
    if (tags.length > 0)
      await s.client.api.setDeviceTags({
        params: { projectId: s.project.id, deviceId: created.device.id },
        body: { tags },
      });
    const board = new SimulatedDevice({
      server: new URL(s.url).host,
      deviceId: created.credentials.deviceId,
      secret: created.credentials.secret,
      reconnect: false,
    });
    if (online) {
      t.after(() => board.stop());
      board.start();
      await board.waitFor("connected", 20_000);
    }
    return { ...created, board };
  };
  return {
    one: await add("one", ["lights"], true),
    two: await add("two", ["lights", "hall"], true),
    away: await add("away", ["lights"], false),
    other: await add("other", [], true),
  };
}

const lineOf = (stdout: string, name: string) =>
  stdout.split("\n").find((l) => l.includes(`${name} (dev_`)) ?? "";

test("devices command --tag/--device: one line per device, --json, exit 1 when any failed, usage errors", async (t) => {
  const s = await signedIn(t);
  const d = await fleet(t, s);

  const sent = await s.run([
    "devices",
    "command",
    "--tag",
    "lights",
    "gpio_write",
    "--args",
    '{"pin":2,"value":1}',
  ]);
  assert.equal(sent.code, 1, "the offline device failed");
  assert.match(lineOf(sent.stdout, "one"), /^✔ one \(dev_\w+\): /);
  assert.match(lineOf(sent.stdout, "two"), /^✔ two/);
  assert.match(lineOf(sent.stdout, "away"), /^✖ away \(dev_\w+\): device_offline: /);
  assert.equal(lineOf(sent.stdout, "other"), "", "a device without the tag is not listed");
  assert.match(sent.stderr, /1 of 3 devices failed/);
  assert.equal(d.one.board.commandsOf("gpio_write").length, 1);
  assert.equal(d.two.board.commandsOf("gpio_write").length, 1);
  assert.equal(d.other.board.commandsOf("gpio_write").length, 0);

  const hall = await s.run([
    "devices",
    "command",
    "--tag",
    "hall",
    "gpio_write",
    "--args",
    '{"pin":3,"value":0}',
    "--timeout",
    "60",
    "--json",
  ]);
  assert.equal(hall.code, 0, hall.stderr);
  const result = JSON.parse(hall.stdout);
  assert.equal(result.tag, "hall");
  assert.deepEqual(
    result.devices.map((x: { name: string; ok: boolean }) => [x.name, x.ok]),
    [["two", true]],
  );

  const byName = await s.run([
    "devices",
    "command",
    "--device",
    "one",
    "gpio_write",
    "--args",
    '{"pin":4,"value":1}',
  ]);
  assert.equal(byName.code, 0, byName.stderr);
  assert.match(byName.stdout, /^✔ one \(dev_\w+\): /m);
  assert.equal(d.one.board.commandsOf("gpio_write").length, 2);
  const offline = await s.run([
    "devices",
    "command",
    "--device",
    d.away.device.id,
    "gpio_write",
    "--args",
    '{"pin":4,"value":1}',
    "--json",
  ]);
  assert.equal(offline.code, 1);
  assert.deepEqual(JSON.parse(offline.stdout).devices[0].error.code, "device_offline");

  const badArgs = await s.run([
    "devices",
    "command",
    "--tag",
    "lights",
    "gpio_write",
    "--args",
    '{"pin":99,"value":1}',
  ]);
  assert.equal(badArgs.code, 1);
  assert.match(badArgs.stderr, /invalid_argument/);
  assert.equal(d.one.board.commandsOf("gpio_write").length, 2, "refused before any device got it");
  const nobody = await s.run([
    "devices",
    "command",
    "--tag",
    "garage",
    "gpio_write",
    "--args",
    '{"pin":2,"value":1}',
  ]);
  assert.equal(nobody.code, 0, nobody.stderr);
  assert.match(nobody.stdout, /No device has the tag garage: nothing was sent/);

  for (const [args, message] of [
    [["gpio_write"], /--tag TAG or --device DEVICE/],
    [["--tag", "lights", "--device", "one", "gpio_write"], /--tag TAG or --device DEVICE/],
    [["--tag", "lights"], /Which command/],
    [["--tag", "lights", "gpio_write", "--args", "{pin:2}"], /--args is not valid JSON/],
    [["--tag", "lights", "gpio_write", "--args", "[1]"], /--args must be a JSON object/],
    [
      ["--tag", "lights", "gpio_write", "--timeout", "500"],
      /--timeout must be a whole number of seconds from 1 to 120/,
    ],
    [["--device", "one", "gpio_write", "--timeout", "5"], /--timeout is for --tag/],
    [["--tag", "Lights", "gpio_write"], /not a valid tag/],
  ] as const) {
    const r = await s.run(["devices", "command", ...args]);
    assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
    assert.match(r.stderr, message);
  }
  const help = await sdk(t, ["devices", "command", "--help"], { home: s.home, cwd: s.work });
  assert.match(help.stdout, /--tag TAG\|--device DEVICE TYPE/);
  assert.match(help.stdout, /8 at a time/);
});

test("devices message --tag/--device reaches the scripts; offline devices and bad messages are reported", async (t) => {
  const s = await signedIn(t);
  await deployScript(
    t,
    s.client,
    s.project.id,
    `import { DeviceScript } from "@sdk/device";
export default class S extends DeviceScript {
  onDeviceConnect() { console.log("script up"); }
  onMessage(msg: { type: string; level?: number }) { console.log("got " + msg.type + " " + msg.level); }
}`,
  );
  const d = await fleet(t, s);
  const logs = async (deviceId: string) =>
    (
      await s.client.api.listDeviceLogs({
        params: { projectId: s.project.id, deviceId },
        query: { limit: 200 },
      })
    ).map((l) => l.message);
  for (const x of [d.one, d.two, d.other])
    await waitUntil(
      async () => (await logs(x.device.id)).includes("script up"),
      20_000,
      "the script running",
    );

  const sent = await s.run(["devices", "message", "--tag", "lights", '{"type":"dim","level":3}']);
  assert.equal(sent.code, 1, "the offline device failed");
  assert.match(lineOf(sent.stdout, "one"), /^✔ one \(dev_\w+\): delivered$/);
  assert.match(lineOf(sent.stdout, "two"), /^✔ two .*delivered$/);
  assert.match(lineOf(sent.stdout, "away"), /^✖ away .*device_offline/);
  for (const x of [d.one, d.two])
    await waitUntil(
      async () => (await logs(x.device.id)).includes("got dim 3"),
      20_000,
      "the message in onMessage",
    );
  assert.equal((await logs(d.other.device.id)).includes("got dim 3"), false);

  const one = await s.run(["devices", "message", "--device", "other", '{"type":"dim","level":7}', "--json"]);
  assert.equal(one.code, 0, one.stderr);
  assert.deepEqual(JSON.parse(one.stdout).devices, [
    { ok: true, deviceId: d.other.device.id, name: "other" },
  ]);
  await waitUntil(
    async () => (await logs(d.other.device.id)).includes("got dim 7"),
    20_000,
    "the one message",
  );

  const badType = await s.run(["devices", "message", "--tag", "lights", '{"type":"Not Snake"}']);
  assert.equal(badType.code, 1);
  assert.match(badType.stderr, /message\.type/);
  for (const [args, message] of [
    [["--tag", "lights"], /Which message/],
    [["--tag", "lights", "{type:dim}"], /not valid JSON/],
    [["--tag", "lights", '"dim"'], /must be a JSON object/],
    [['{"type":"dim"}'], /--tag TAG or --device DEVICE/],
  ] as const) {
    const r = await s.run(["devices", "message", ...args]);
    assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
    assert.match(r.stderr, message);
  }
});
