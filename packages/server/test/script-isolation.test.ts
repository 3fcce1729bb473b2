import assert from "node:assert/strict";
import { type TestContext, test } from "node:test";
import { deployScript as deploy, waitUntil } from "@sdk/test-helpers";
import { scriptProject } from "./helpers/script-project.ts";
import { raw } from "./helpers/server.ts";
import { openSocket, wsUrl } from "./helpers/sockets.ts";

const busyTimers = `import { DeviceScript } from "@sdk/device";
export default class Hostile extends DeviceScript {
  async onDeviceConnect() {
    for (let i = 0; i < 64; i++) setInterval(() => { for (;;) {} }, 10);
  }
}`;

const counter = `import { DeviceScript } from "@sdk/device";
export default class Counter extends DeviceScript {
  async onMessage(msg) {
    if (msg.type === "n") this.env.DEVICE.emitState("n", msg.n);
  }
}`;

/** A script project with `source` deployed to it. */
async function deployedProject(
  t: TestContext,
  options: Parameters<typeof scriptProject>[1],
  source: string,
  deployOptions?: Parameters<typeof deploy>[4],
) {
  const s = await scriptProject(t, options);
  await deploy(t, s.client, s.project.id, source, deployOptions);
  return s;
}

const throttledLine =
  /^scripts throttled: they used their CPU budget of 50 ms per second \(SCRIPT_CPU_BUDGET_MS\)/;
const collapsedTimeouts = /^Script execution timeout \(repeated (\d+) more times? in the last 10 s\)$/;

test("a hostile project is throttled and told so once, its repeated timeouts collapse, another project's events go on, and its redeploy goes live", async (t) => {
  const began = Date.now();
  const s = await scriptProject(t, {
    env: { SCRIPT_CPU_BUDGET_MS: "50", SCRIPT_TIMEOUT_MS: "50", SCRIPT_WORKERS: "1" },
  });
  const other = await s.client.api.createProject({ body: { name: "other" } });
  await deploy(t, s.client, other.id, counter);
  const good = await s.addDevice("good", other.id);
  good.sim.start();
  await good.sim.waitFor("connected");
  await waitUntil(
    () => s.server.services.scripts.runningDeployment(other.id) !== null,
    20_000,
    "counter running",
  );

  await deploy(t, s.client, s.project.id, busyTimers, { skipTypeCheck: true });
  const bad = await s.runningDevice();
  await waitUntil(
    async () => (await s.logs(bad.device.id)).some((l) => throttledLine.test(l)),
    30_000,
    "the hostile project's device log says it is throttled",
  );
  assert.equal((await raw(`${s.url}/health`)).status, 200);

  // The other project's device → its script → stored → its watcher, while the hostile one spins.
  const watch = await openSocket(
    t,
    wsUrl(s.url, `/v1/projects/${other.id}/devices/${good.device.id}/watch`),
    {
      headers: { authorization: `Bearer ${s.client.token}` },
    },
  );
  await watch.inbox.type("snapshot");
  for (let n = 1; n <= 50; n++) good.sim.sendEvent("n", { n });
  await watch.inbox.next((m) => m.type === "state" && m.entityId === "n" && m.value === 50, 30_000);
  assert.equal((await raw(`${s.url}/health`)).status, 200);

  // Repeated timeouts are counted, not written one by one.
  await waitUntil(
    async () => (await s.logs(bad.device.id)).some((l) => collapsedTimeouts.test(l)),
    60_000,
    "a collapsed 'Script execution timeout (repeated N more times in the last 10 s)' line",
  );
  const lines = await s.logs(bad.device.id);
  const plain = lines.filter((l) => l === "Script execution timeout").length;
  const summaries = lines.filter((l) => collapsedTimeouts.test(l));
  const collapsed = summaries.reduce((sum, l) => sum + Number(collapsedTimeouts.exec(l)![1]), 0);
  t.diagnostic(`timeouts written: ${plain}, collapsed: ${collapsed} in ${summaries.length} lines`);
  // Bounds from the time the test took (a busy machine may take minutes), not from a schedule.
  const elapsedMs = Date.now() - began;
  const windows = Math.ceil(elapsedMs / 10_000) + 1;
  assert.ok(plain <= 3 * windows, `at most 3 plain lines per 10 s window (${plain} in ${windows})`);
  assert.ok(collapsed > 0);
  const throttleLines = lines.filter((l) => throttledLine.test(l)).length;
  assert.ok(
    throttleLines <= Math.ceil(elapsedMs / 60_000) + 1,
    `the throttle is said once a minute at most (${throttleLines} in ${elapsedMs} ms)`,
  );

  // The owner's corrective deploy goes live, on the same connection.
  const fixed = await deploy(
    t,
    s.client,
    s.project.id,
    `import { DeviceScript } from "@sdk/device";
export default class Fixed extends DeviceScript {
  async onDeviceConnect() { this.env.DEVICE.emitState("fixed", 1); }
}`,
  );
  assert.equal(fixed.status, "active");
  assert.equal(s.server.services.scripts.runningDeployment(s.project.id), fixed.id);
  await waitUntil(
    async () =>
      (await s.client.api.getDeviceState({ params: bad.ids })).some(
        (v) => v.entityId === "fixed" && v.value === 1,
      ),
    30_000,
    "the fixed script ran",
  );
  assert.equal(bad.sim.connected, true);
});

test("waitForRoom pushes back while a throttled project's messages queue in its worker, and lets go once they drain", async (t) => {
  const s = await deployedProject(
    t,
    {
      env: { SCRIPT_CPU_BUDGET_MS: "10", SCRIPT_TIMEOUT_MS: "50", SCRIPT_WORKERS: "1" },
    },
    `import { DeviceScript } from "@sdk/device";
export default class Queue extends DeviceScript {
  n = 0;
  async onMessage(msg) {
    if (msg.type === "spin") for (;;) {}
    if (msg.type === "count" && ++this.n === 600) console.log("all 600 ran");
  }
}`,
    { skipTypeCheck: true },
  );
  const { ids, device } = await s.runningDevice();
  const scripts = s.server.services.scripts;
  assert.equal(scripts.waitForRoom(s.project.id), null, "an idle project has room");

  // Over its budget once (the second message has to wait): it moves to the isolated worker (a restart).
  await scripts.deliver(ids, { type: "spin" });
  await scripts.deliver(ids, { type: "spin" });
  await waitUntil(
    async () => (await s.logs(device.id)).some((l) => l.startsWith("scripts throttled:")),
    30_000,
  );
  await scripts.settled(s.project.id);
  await waitUntil(() => scripts.runningDeployment(s.project.id) !== null, 30_000, "restarted");

  await scripts.deliver(ids, { type: "spin" });
  // As device sockets do (they wait on waitForRoom); a user's message (REST) is refused meanwhile.
  for (let i = 0; i < 600; i++)
    void s.server.bus.publish("device.message", { ...ids, message: { type: "count" } });
  const room = scripts.waitForRoom(s.project.id);
  assert.ok(room instanceof Promise, "600 queued messages are over the high-water mark");
  await assert.rejects(
    scripts.deliver(ids, { type: "count" }),
    (e: { code?: string }) => e.code === "scripts_busy",
    "a message from a user is refused with 429 scripts_busy while the project is at its bound",
  );
  await room;
  assert.equal(scripts.waitForRoom(s.project.id), null, "below the low-water mark again");
  await waitUntil(
    async () => (await s.logs(device.id)).includes("all 600 ran"),
    120_000,
    "every message ran",
  );
});

test("a script's output flood is bounded: the excess is dropped and counted, repeated lines are collapsed", async (t) => {
  // A deadline far beyond what 5,000 console.log calls take even on a very busy machine.
  const s = await deployedProject(
    t,
    { env: { SCRIPT_TIMEOUT_MS: "30000" } },
    `import { DeviceScript } from "@sdk/device";
export default class Flood extends DeviceScript {
  async onMessage(msg) {
    if (msg.type === "same") for (let i = 0; i < 50; i++) console.log("the same line");
    if (msg.type === "flood") for (let i = 0; i < 5000; i++) console.log(\`flood \${i}\`);
  }
}`,
  );
  const { ids, device } = await s.runningDevice();
  await s.client.api.sendDeviceMessage({ params: ids, body: { type: "same" } });
  await waitUntil(
    async () =>
      (await s.logs(device.id)).some((l) =>
        /^the same line \(repeated 47 more times in the last 10 s\)$/.test(l),
      ),
    60_000,
    "50 identical lines: 3 written, then one line with the count",
  );
  assert.equal((await s.logs(device.id)).filter((l) => l === "the same line").length, 3);

  await s.client.api.sendDeviceMessage({ params: ids, body: { type: "flood" } });
  const dropped =
    /^(\d+) emitState\/log\/send calls were dropped in the last 10 s: over 1000 from one handler call/;
  await waitUntil(
    async () =>
      (await s.client.api.listDeviceLogs({ params: ids, query: { limit: 500 } })).some((l) =>
        dropped.test(l.message),
      ),
    60_000,
    "a line counting the dropped output",
  );
  const all = await s.client.api.listDeviceLogs({ params: ids, query: { limit: 500 } });
  const count = Number(dropped.exec(all.find((l) => dropped.test(l.message))!.message)![1]);
  const written = all.filter((l) => l.message.startsWith("flood ")).length;
  t.diagnostic(`flood: ${written} lines written (of the last 500 read), ${count} dropped`);
  assert.equal(count, 4000, "one handler call's output past 1000 items is dropped");
});

test("a timeout in the worker still becomes a script.failed event", async (t) => {
  const s = await scriptProject(t, { env: { SCRIPT_TIMEOUT_MS: "50" } });
  const failed: { projectId: string; deviceId: string; kind: string }[] = [];
  t.after(s.server.bus.subscribe("script.failed", (e) => void failed.push(e)));
  await deploy(
    t,
    s.client,
    s.project.id,
    `import { DeviceScript } from "@sdk/device";
export default class Spins extends DeviceScript {
  async onMessage(msg) {
    if (msg.type === "spin") for (;;) {}
  }
}`,
    { skipTypeCheck: true },
  );
  const { ids } = await s.runningDevice();
  await s.server.services.scripts.deliver(ids, { type: "spin" });
  await waitUntil(() => failed.length >= 1, 30_000, "a script.failed event");
  assert.deepEqual(
    failed.map((e) => [e.projectId, e.deviceId, e.kind]),
    [[ids.projectId, ids.deviceId, "timeout"]],
  );
});

test("a script's commands to one device are capped: past 64 waiting, more are refused with too_many_commands", async (t) => {
  const s = await deployedProject(
    t,
    {},
    `import { DeviceScript } from "@sdk/device";
export default class Burst extends DeviceScript {
  async onMessage(msg) {
    if (msg.type !== "burst") return;
    let refused = 0;
    let answered = 0;
    const all = [];
    for (let i = 0; i < 100; i++)
      all.push(this.env.DEVICE.gpioRead(2).then(() => { answered++; }, (e) => { if (e.code === "too_many_commands") refused++; }));
    await Promise.all(all);
    console.log(\`answered \${answered}, refused \${refused}\`);
  }
}`,
    { skipTypeCheck: true },
  );
  const { ids, device } = await s.runningDevice();
  await s.client.api.sendDeviceMessage({ params: ids, body: { type: "burst" } });
  await waitUntil(
    async () => (await s.logs(device.id)).some((l) => l.startsWith("answered ")),
    60_000,
    "the burst's outcome logged",
  );
  assert.ok((await s.logs(device.id)).includes("answered 64, refused 36"));
});

test("output made while a sandbox is disposed is still stored: the last device's onDeviceDisconnect line", async (t) => {
  const s = await deployedProject(
    t,
    {},
    `import { DeviceScript } from "@sdk/device";
export default class Bye extends DeviceScript {
  onDeviceDisconnect() {
    console.log("bye");
    this.env.DEVICE.emitState("left", true);
  }
}`,
  );
  const { sim, device, ids } = await s.runningDevice();
  await sim.stop();
  await waitUntil(
    async () => (await s.logs(device.id)).includes("bye"),
    60_000,
    "the disconnect handler's line in the device log",
  );
  await waitUntil(
    async () =>
      (await s.client.api.getDeviceState({ params: ids })).some(
        (v) => v.entityId === "left" && v.value === true,
      ),
    60_000,
    "the disconnect handler's state stored",
  );
});

test("a crashed worker thread restarts every project on it, uncounted: another project's script runs again each time", async (t) => {
  const s = await scriptProject(t, { env: { SCRIPT_WORKERS: "1" } });
  const other = await s.client.api.createProject({ body: { name: "other" } });
  await deploy(t, s.client, other.id, counter);
  const good = await s.addDevice("good", other.id);
  good.sim.start();
  await good.sim.waitFor("connected");
  await deploy(t, s.client, s.project.id, counter);
  await s.runningDevice();
  const scripts = s.server.services.scripts;
  await waitUntil(() => scripts.runningDeployment(other.id) !== null, 30_000, "the other project running");

  const watch = await openSocket(
    t,
    wsUrl(s.url, `/v1/projects/${other.id}/devices/${good.device.id}/watch`),
    { headers: { authorization: `Bearer ${s.client.token}` } },
  );
  await watch.inbox.type("snapshot");
  const restartLine = /^the scripts restart: the scripts' worker thread stopped/;
  // More crashes than the 3 restarts in 5 minutes a failing project gets.
  for (let crash = 1; crash <= 5; crash++) {
    scripts.crashWorkerForTests(s.project.id);
    await waitUntil(
      async () => (await s.logs(good.device.id, other.id)).filter((l) => restartLine.test(l)).length >= crash,
      60_000,
      `the other project's device told of restart ${crash}`,
    );
    await scripts.settled(other.id);
    await waitUntil(
      () => scripts.runningDeployment(other.id) !== null,
      60_000,
      "the other project running again",
    );
    good.sim.sendEvent("n", { n: crash });
    await watch.inbox.next((m) => m.type === "state" && m.entityId === "n" && m.value === crash, 60_000);
  }
  const lines = await s.logs(good.device.id, other.id);
  assert.ok(!lines.some((l) => l.startsWith("scripts stopped:")), "the crashes were not counted against it");
  assert.ok(!lines.some((l) => l.startsWith("scripts throttled:")));
});

test("device messages that arrive while a redeploy goes live are held for the new version, none lost", async (t) => {
  const s = await deployedProject(t, { env: { STATE_HISTORY_MAX_ENTRIES: "100000" } }, counter);
  const { sim, ids } = await s.runningDevice();
  const watch = await openSocket(
    t,
    wsUrl(s.url, `/v1/projects/${ids.projectId}/devices/${ids.deviceId}/watch`),
    {
      headers: { authorization: `Bearer ${s.client.token}` },
    },
  );
  await watch.inbox.type("snapshot");
  const seen = new Set<number>();
  watch.ws.on("message", (data) => {
    const event = JSON.parse(data.toString()) as { type: string; entityId?: string; value?: unknown };
    if (event.type === "state" && event.entityId === "n" && typeof event.value === "number")
      seen.add(event.value);
  });
  // Messages keep coming, one per turn of the event loop, for as long as the redeploys take.
  let sent = 0;
  let deploying = true;
  const redeploys = (async () => {
    for (let i = 0; i < 3; i++) await deploy(t, s.client, s.project.id, `${counter}\n// version ${i}`);
    deploying = false;
  })();
  while (deploying) {
    sim.sendEvent("n", { n: ++sent });
    await new Promise((resolve) => setImmediate(resolve));
  }
  await redeploys;
  t.diagnostic(`${sent} messages sent during 3 redeploys`);
  await waitUntil(() => seen.size === sent, 120_000, "every message's state watched");
  assert.deepEqual(
    [...seen].sort((a, b) => a - b),
    Array.from({ length: sent }, (_, i) => i + 1),
  );
});

test("a timer-driven output flood is dropped past 1,000 items a second per device, counted in the device log", async (t) => {
  const s = await deployedProject(
    t,
    { env: { SCRIPT_TIMEOUT_MS: "30000" } },
    `import { DeviceScript } from "@sdk/device";
export default class TimerFlood extends DeviceScript {
  n = 0;
  async onDeviceConnect() {
    setInterval(() => { for (let i = 0; i < 500; i++) this.env.DEVICE.emitState("n", ++this.n); }, 10);
  }
}`,
  );
  const { ids } = await s.runningDevice();
  const dropped = /^(\d+) emitState\/log\/send calls? (was|were) dropped in the last 10 s/;
  await waitUntil(
    async () =>
      (await s.client.api.listDeviceLogs({ params: ids, query: { limit: 200 } })).some((l) =>
        dropped.test(l.message),
      ),
    120_000,
    "a line counting the timers' dropped output",
  );
  assert.equal((await raw(`${s.url}/health`)).status, 200);
});
