// `sdk deploy --canary`: the real CLI process against a real server process with simulated boards.
// A good canary is promoted (exit 0), one that throws on every message is rolled back (exit 1, the
// reason in its JSON, the stable device never ran it), and --no-wait returns once it started.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { type TestContext, test } from "node:test";
import type { Deployment } from "@sdk/protocol";
import { SimulatedDevice } from "@sdk/simulator";
import { waitUntil, within } from "@sdk/test-helpers";
import { sdk, sdkLive, signedInProject } from "./helpers.ts";

const script = (version: string, onMessage = `console.log("${version} got " + msg.type);`) =>
  `import { DeviceScript } from "@sdk/device";
export default class Main extends DeviceScript {
  onDeviceConnect() { console.log("${version} up"); }
  onMessage(msg: { type: string }) { ${onMessage} }
}
`;

interface DeployJson {
  ok: boolean;
  deployment: Deployment;
}

/** A signed-in project with a project dir, a kitchen device and a stable device, both connected. */
async function fleet(t: TestContext) {
  const s = await signedInProject(t, "canary", "sdk-canary");
  const dir = path.join(s.work, "app");
  fs.mkdirSync(path.join(dir, "src"), { recursive: true });
  fs.writeFileSync(
    path.join(dir, "sdk.ts"),
    `import { defineConfig } from "@sdk/device";\nexport default defineConfig({ project: "${s.project.id}", board: "pico_w" });\n`,
  );
  const write = (text: string) => fs.writeFileSync(path.join(dir, "src", "index.ts"), text);
  // A canary's window and the server's decision take real time: a minute before giving up.
  const deploy = (args: string[]) =>
    sdk(t, ["deploy", "--dir", dir, ...args, "--project", s.project.id], {
      home: s.home,
      cwd: s.work,
      timeoutMs: 60_000,
    });
  const board = async (name: string, tags: string[]) => {
    const { device, credentials } = await s.client.api.createDevice({
      params: { projectId: s.project.id },
      body: { name, board: "pico_w" },
    });
    if (tags.length)
      await s.client.api.setDeviceTags({
        params: { projectId: s.project.id, deviceId: device.id },
        body: { tags },
      });
    const sim = new SimulatedDevice({
      server: new URL(s.url).host,
      deviceId: credentials.deviceId,
      secret: credentials.secret,
      reconnect: false,
    });
    t.after(() => sim.stop());
    sim.start();
    await sim.waitFor("connected", 20_000);
    return { device, sim };
  };
  const kitchen = await board("kitchen-1", ["kitchen"]);
  const hall = await board("hall-1", []);
  const logs = async (deviceId: string) =>
    (
      await s.client.api.listDeviceLogs({
        params: { projectId: s.project.id, deviceId },
        query: { limit: 200 },
      })
    ).map((l) => l.message);
  const ran = (deviceId: string, line: string, what: string) =>
    waitUntil(async () => (await logs(deviceId)).includes(line), 60_000, what, 250);
  /** Resolves with deployment v`version` once the server lists it as a running canary. */
  const canaryRunning = async (version: number) => {
    let found: Deployment | undefined;
    await waitUntil(
      async () => {
        const list = await s.client.api.listDeployments({ params: { projectId: s.project.id } });
        found = list.find((d) => d.version === version && d.status === "canary");
        return found !== undefined;
      },
      60_000,
      `v${version} running as a canary`,
      250,
    );
    return found!;
  };
  return { ...s, dir, write, deploy, kitchen, hall, logs, ran, canaryRunning };
}

test("sdk deploy --canary: usage errors for bad flags, before anything is built or sent", async (t) => {
  const s = await signedInProject(t, "flags", "sdk-canary-flags");
  for (const [args, message] of [
    [["--canary", "Kitchen"], /not a valid tag/],
    [["--canary", "150%"], /from 1% to 99%/],
    [["--canary", "kitchen", "--window", "5 minutes"], /90s, 5m, 1h/],
    [["--window", "30"], /--window is the window of a --canary/],
    [["--canary", "kitchen", "--no-rollback"], /--no-rollback is for a plain deploy/],
    [["--no-wait"], /--no-wait is for a --canary/],
  ] as const) {
    const r = await s.run(["deploy", ...args]);
    assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
    assert.match(r.stderr, message);
  }
  const help = await sdk(t, ["deploy", "--help"], { home: s.home, cwd: s.work });
  assert.match(help.stdout, /--canary <tag\|N%>/);
  assert.match(help.stdout, /--no-wait/);
  assert.match(help.stdout, /--verbose/);
});

test("sdk deploy --canary: --no-wait returns once it started; a good canary is promoted (exit 0); one that throws is rolled back (exit 1) and the stable device never ran it; a crash-looping plain deploy is rolled back unless --no-rollback", async (t) => {
  const f = await fleet(t);
  f.write(script("v1"));
  const first = await f.deploy(["--json"]);
  assert.equal(first.code, 0, first.stderr);
  assert.equal((JSON.parse(first.stdout) as DeployJson).deployment.status, "active");
  await f.ran(f.kitchen.device.id, "v1 up", "v1 on the kitchen device");
  await f.ran(f.hall.device.id, "v1 up", "v1 on the hall device");

  const nobody = await f.deploy(["--canary", "25"]);
  assert.equal(nobody.code, 1);
  assert.match(
    nobody.stderr,
    /For a share of the connected devices, write --canary 25%.*\[no_canary_devices\]/,
  );

  // --no-wait: back at once with the canary running, and how to follow it.
  f.write(script("v2"));
  const started = await f.deploy(["--canary", "kitchen", "--window", "10m", "--no-wait", "--json"]);
  assert.equal(started.code, 0, started.stderr);
  const running = (JSON.parse(started.stdout) as DeployJson).deployment;
  assert.equal(running.status, "canary");
  assert.equal(running.rollout?.kind, "canary");
  assert.deepEqual(running.rollout?.target, { tag: "kitchen" });
  assert.deepEqual(running.rollout?.devices, [f.kitchen.device.id]);
  assert.equal(running.rollout?.windowSeconds, 600);
  const busy = await f.deploy(["--canary", "kitchen"]);
  assert.equal(busy.code, 1, "one canary at a time");
  assert.match(busy.stderr, /rollout_in_progress/);
  const status = await f.run(["status"]);
  assert.match(status.stdout, /Canary v2: \d+ devices?, \d+ calls?/);
  const ended = await f.client.api.rollBackDeployment({
    params: { projectId: f.project.id, deploymentId: running.id },
  });
  assert.equal(ended.status, "rolled_back");

  // A good canary: promoted when its 2 s window ends.
  f.write(script("v3"));
  const good = await f.deploy(["--canary", "kitchen", "--window", "2", "--json"]);
  assert.equal(good.code, 0, good.stderr);
  const promoted = (JSON.parse(good.stdout) as DeployJson).deployment;
  assert.equal(promoted.version, 3);
  assert.equal(promoted.status, "active");
  assert.equal(promoted.rollout?.decision, "promoted");
  assert.ok(promoted.rollout?.reason, "the decision says why");
  await f.ran(f.hall.device.id, "v3 up", "the promoted version on the stable device too");

  // A canary that throws on every message, while both devices send messages: rolled back at once.
  f.write(script("v4", `throw new Error("v4 cannot handle " + msg.type);`));
  const bad = sdkLive(
    t,
    ["deploy", "--dir", f.dir, "--canary", "kitchen", "--window", "10m", "--json", "--project", f.project.id],
    { home: f.home, cwd: f.work },
  );
  await f.canaryRunning(4);
  await f.ran(f.kitchen.device.id, "v4 up", "the canary on the kitchen device");
  for (let n = 0; n < 6; n++) {
    assert.ok(f.kitchen.sim.sendEvent("tick", { n }));
    assert.ok(f.hall.sim.sendEvent("tick", { n }));
  }
  const exit = await within(bad.exited, 60_000, "sdk deploy to exit once the canary was rolled back");
  assert.equal(exit.code, 1, bad.stderr());
  const rolled = (JSON.parse(bad.stdout()) as DeployJson).deployment;
  assert.equal(rolled.version, 4);
  assert.equal(rolled.status, "rolled_back");
  assert.equal(rolled.rollout?.decision, "rolled_back");
  assert.match(rolled.rollout?.reason ?? "", /handler calls failed/);
  assert.ok((rolled.rollout?.health.canary.errors ?? 0) >= 3);
  assert.equal(rolled.rollout?.health.stable.errors, 0);
  await f.ran(f.hall.device.id, "v3 got tick", "the stable device handling the messages with v3");
  assert.ok(
    !(await f.logs(f.hall.device.id)).some((l) => l.includes("v4")),
    "the stable device never ran v4",
  );

  // The same in human output: the reason, and the live version says so.
  const text = await f.run(["status"]);
  assert.match(text.stdout, /v4 rolled back: .*handler calls failed/);
  assert.match(text.stdout, /Deployment: v3 active/);

  // For people: the start, progress lines with both sides and the time left, then the decision.
  f.write(script("v5"));
  const shown = await f.deploy(["--canary", "25%", "--window", "2"]);
  assert.equal(shown.code, 0, shown.stderr);
  assert.match(shown.stdout, /Canary v5 started on 1 device \(25% of the connected devices\) for 0:02/);
  assert.match(
    shown.stderr,
    /Canary v5: \d+ devices?, \d+ calls?, 0 failed · stable: \d+ devices?, .* · (0:0\d left|deciding)/,
  );
  assert.match(shown.stdout, /✔ Canary v5 promoted: live on every device/);

  // A plain deploy whose onDeviceConnect throws on every device: rolled back at once, exit 1;
  // with --no-rollback it stays live.
  f.write(script("v6").replace(`console.log("v6 up");`, `throw new Error("v6 cannot start");`));
  const crash = await f.deploy([]);
  assert.equal(crash.code, 1, crash.stdout);
  assert.match(crash.stderr, /✖ Deployment v6 was rolled back; the previous version stays live:/);
  assert.match(crash.stderr, /onDeviceConnect/);
  f.write(script("v7").replace(`console.log("v7 up");`, `throw new Error("v7 cannot start");`));
  const kept = await f.deploy(["--no-rollback", "--json"]);
  assert.equal(kept.code, 0, kept.stderr);
  const live = (JSON.parse(kept.stdout) as DeployJson).deployment;
  assert.equal(live.status, "active");
  assert.equal(live.rollout?.rollback, false);
});

test("sdk deploy --canary: Ctrl-C while waiting exits 1 with stopped: interrupted; the canary goes on on the server", async (t) => {
  const f = await fleet(t);
  f.write(script("v1"));
  const first = await f.deploy(["--json"]);
  assert.equal(first.code, 0, first.stderr);

  f.write(script("v2"));
  const waiting = sdkLive(
    t,
    ["deploy", "--dir", f.dir, "--canary", "kitchen", "--window", "10m", "--json", "--project", f.project.id],
    { home: f.home, cwd: f.work },
  );
  // Its one stderr line in JSON mode: it is following the canary (and handles Ctrl-C) from now on.
  await waiting.waitForOutput(
    ({ stderr }) => /Waiting for canary v2's decision/.test(stderr),
    60_000,
    "sdk deploy waiting for the decision",
  );
  const exit = await waiting.stop("SIGINT", 60_000);
  assert.equal(exit.code, 1, waiting.stderr());
  const out = JSON.parse(waiting.stdout()) as DeployJson & { stopped: string };
  assert.equal(out.ok, false);
  assert.equal(out.stopped, "interrupted");
  assert.equal(out.deployment.version, 2);
  assert.equal(out.deployment.status, "canary");
  assert.match(waiting.stderr(), /Stopped waiting \(interrupted\)/);
  assert.match(waiting.stderr(), /The canary decides by itself/);
  const running = await f.client.api.getDeployment({
    params: { projectId: f.project.id, deploymentId: out.deployment.id },
  });
  assert.equal(running.status, "canary", "the canary is still in its window on the server");
  assert.equal(running.rollout?.decision, null);
});
