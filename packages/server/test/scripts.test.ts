import assert from "node:assert/strict";
import { type TestContext, test } from "node:test";
import { deployScript as deploy, waitUntil } from "@sdk/test-helpers";
import { scriptProject } from "./helpers/script-project.ts";
import { raw } from "./helpers/server.ts";
import { openSocket, wsUrl } from "./helpers/sockets.ts";

const setup = (t: TestContext, env: Record<string, string> = {}) => scriptProject(t, { env });

const blink = `
import { DeviceScript, OnboardLED } from "@sdk/device";
export default class Blink extends DeviceScript {
  async onDeviceConnect() { setInterval(() => this.env.DEVICE.gpioToggle(OnboardLED), 100); }
  async onMessage(msg) { if (msg.type === "gpio_change") this.env.DEVICE.emitState("button", msg.value); }
}
`;

test("Blink: the simulator sees the onboard LED toggle at the script's cadence", async (t) => {
  const s = await setup(t);
  const deployment = await deploy(t, s.client, s.project.id, blink);
  assert.equal(deployment.status, "active");
  assert.equal(deployment.version, 1);
  const { sim } = await s.addDevice();
  sim.start();
  await sim.waitFor(() => sim.ledHistory.length >= 8, 5000);
  const times = sim.ledHistory.map((h) => h.at);
  const gaps = times.slice(1).map((at, i) => at - times[i]!);
  const median = [...gaps].sort((a, b) => a - b)[Math.floor(gaps.length / 2)]!;
  t.diagnostic(`LED toggle gaps (ms): ${gaps.join(", ")}`);
  assert.ok(median >= 80 && median <= 160, `toggles every ~100 ms (median gap ${median} ms)`);
  const levels = sim.ledHistory.map((h) => h.value);
  assert.ok(
    levels.every((l, i) => i === 0 || l !== levels[i - 1]),
    "each toggle flips the level",
  );
});

test("ADC → emitState → the watcher gets the state event and REST shows the latest value", async (t) => {
  const s = await setup(t);
  await deploy(
    t,
    s.client,
    s.project.id,
    `import { DeviceScript, GP26 } from "@sdk/device";
export default class Sensor extends DeviceScript {
  async onMessage(msg) {
    if (msg.type !== "sample") return;
    const { volts } = await this.env.DEVICE.adcRead(GP26);
    this.env.DEVICE.emitState("voltage", Math.round(volts * 100) / 100);
  }
}`,
  );
  const { sim, device, ids } = await s.addDevice();
  sim.setVoltage(26, 1.23);
  sim.start();
  await sim.waitFor("connected");
  const watch = await openSocket(t, wsUrl(s.url, `/v1/projects/${s.project.id}/devices/${device.id}/watch`), {
    headers: { authorization: `Bearer ${s.client.token}` },
  });
  await watch.inbox.type("snapshot");
  await waitUntil(() => s.server.services.scripts.runningDeployment(s.project.id) !== null);
  const delivered = await s.client.api.sendDeviceMessage({ params: ids, body: { type: "sample" } });
  assert.deepEqual(delivered, { delivered: true });
  const event = await watch.inbox.next((m) => m.type === "state" && m.entityId === "voltage");
  assert.equal(event.value, 1.23);
  const state = await s.client.api.getDeviceState({ params: ids });
  assert.deepEqual(
    state.map((v) => [v.entityId, v.value]),
    [["voltage", 1.23]],
  );
});

test("bad arguments throw invalid_argument synchronously and nothing reaches the simulator", async (t) => {
  const s = await setup(t);
  await deploy(
    t,
    s.client,
    s.project.id,
    `import { DeviceScript, SdkError } from "@sdk/device";
export default class Bad extends DeviceScript {
  onMessage(msg) {
    const tries = [
      () => this.env.DEVICE.gpioWrite(23 as never, 1),
      () => this.env.DEVICE.adcRead(25 as never),
      () => this.env.DEVICE.pwm(2, 5, 0.5),
      () => this.env.DEVICE.i2cWrite(0, 0x03, [1]),
      () => this.env.DEVICE.i2cWrite(0, 0x50, [256]),
      () => this.env.DEVICE.i2cConfigure(0, 2 as never, 3 as never),
      () => this.env.DEVICE.uartConfigure(0, { tx: 0, rx: 1 }, 12345),
      () => this.env.DEVICE.ws2812Write(2, [[255, 0, 300]]),
      () => this.env.DEVICE.send({ type: "blob", data: "x".repeat(70000) }),
      () => this.env.DEVICE.emitState("bad id!", 1),
    ];
    for (const run of tries) {
      try {
        const p = run();
        console.log("NOT THROWN", String(p));
      } catch (e) {
        console.log(e instanceof SdkError ? \`\${e.code} \${e.docs} \${e.message}\` : \`other \${e}\`);
      }
    }
  }
}`,
  );
  const { sim, ids, device } = await s.runningDevice();
  sim.clearCommands();
  await s.client.api.sendDeviceMessage({ params: ids, body: { type: "go" } });
  await waitUntil(
    async () => (await s.logs(device.id)).filter((l) => l.startsWith("invalid_argument")).length === 10,
  );
  const lines = (await s.logs(device.id)).filter((l) => /^(invalid_argument|NOT THROWN|other)/.test(l));
  assert.equal(lines.length, 10, lines.join("\n"));
  for (const line of lines)
    assert.ok(line.startsWith(`invalid_argument ${s.url}/docs/errors#invalid_argument `), line);
  assert.ok(lines.some((l) => /GPIO numbers 0–22 and 26–28/.test(l)));
  assert.ok(lines.some((l) => /I2C address must be 0x08–0x77/.test(l)));
  assert.ok(lines.some((l) => /below 64 KB/.test(l)));
  assert.deepEqual(sim.commands, [], "no command reached the device");
});

test("script errors point at the docs under PUBLIC_URL when it is set", async (t) => {
  const s = await setup(t, { PUBLIC_URL: "https://sdk.example.com/" });
  await deploy(
    t,
    s.client,
    s.project.id,
    `import { DeviceScript, type SdkError } from "@sdk/device";
export default class Docs extends DeviceScript {
  onMessage() {
    try { this.env.DEVICE.gpioWrite(23 as never, 1); } catch (e) { console.log("docs", (e as SdkError).docs); }
  }
}`,
  );
  const { ids, device } = await s.runningDevice();
  await s.client.api.sendDeviceMessage({ params: ids, body: { type: "go" } });
  await waitUntil(async () => (await s.logs(device.id)).some((l) => l.startsWith("docs ")));
  assert.deepEqual(
    (await s.logs(device.id)).filter((l) => l.startsWith("docs ")),
    ["docs https://sdk.example.com/docs/errors#invalid_argument"],
  );
});

test("hostile scripts are contained and logged, and /health answers throughout", async (t) => {
  const s = await setup(t, { SCRIPT_TIMEOUT_MS: "50", SCRIPT_MEMORY_LIMIT_MB: "32" });
  await deploy(
    t,
    s.client,
    s.project.id,
    `import { DeviceScript } from "@sdk/device";
export default class Hostile extends DeviceScript {
  onMessage(msg) {
    const g = globalThis as any;
    switch (msg.type) {
      case "loop": while (true) {} 
      case "promise_loop": { const spin = async () => { while (true) await null; }; spin(); return; }
      case "timers": for (let i = 0; i < 1000; i++) setInterval(() => {}, 0); return;
      case "alloc": { const a = []; while (true) a.push(new Array(100000).fill(1)); }
      case "escape": {
        const found = [typeof g.process, typeof g.require, typeof g.__sdk_host, typeof g.fetch, typeof g.Deno, typeof g.Bun].join(",");
        console.log("globals:", found);
        try { console.log("ctor:", typeof (function () {}).constructor("return this")().process); } catch (e) { console.log("ctor threw", String(e)); }
        import("node:fs").then(() => console.log("IMPORTED"), (e) => console.log("import refused:", String(e)));
        console.log("env:", JSON.stringify(this.env));
        return;
      }
    }
  }
}`,
    { skipTypeCheck: true }, // the point of this script is to do what types would forbid
  );
  const { sim, ids, device } = await s.runningDevice();
  const health = async () => (await raw(`${s.url}/health`)).status === 200;

  for (const type of ["loop", "promise_loop"]) {
    const started = Date.now();
    await s.client.api.sendDeviceMessage({ params: ids, body: { type } });
    assert.ok(await health());
    t.diagnostic(`${type}: contained after ${Date.now() - started} ms`);
    await waitUntil(
      async () =>
        (await s.logs(device.id)).filter((l) => l === "Script execution timeout").length >=
        (type === "loop" ? 1 : 2),
    );
  }
  const watch = await openSocket(t, wsUrl(s.url, `/v1/projects/${s.project.id}/devices/${device.id}/watch`), {
    headers: { authorization: `Bearer ${s.client.token}` },
  });
  await watch.inbox.type("snapshot");
  await s.client.api.sendDeviceMessage({ params: ids, body: { type: "loop" } });
  const timeoutEvent = await watch.inbox.next(
    (m) => m.type === "log" && m.entry.message === "Script execution timeout",
  );
  assert.equal(timeoutEvent.entry.level, "error");
  assert.equal(timeoutEvent.entry.source, "script");

  await s.client.api.sendDeviceMessage({ params: ids, body: { type: "timers" } });
  await waitUntil(async () =>
    (await s.logs(device.id)).some((l) => /too many timers: at most 64 per device/.test(l)),
  );
  assert.ok(await health());

  await s.client.api.sendDeviceMessage({ params: ids, body: { type: "escape" } });
  await waitUntil(async () => (await s.logs(device.id)).some((l) => l.startsWith("import refused:")));
  const logs = await s.logs(device.id);
  assert.ok(
    logs.includes("globals: undefined,undefined,undefined,undefined,undefined,undefined"),
    logs.join("\n"),
  );
  assert.ok(logs.some((l) => l === "ctor: undefined"));
  assert.ok(!logs.includes("IMPORTED"));
  assert.ok(logs.includes("env: {}"));

  const before = s.server.services.scripts.runningDeployment(s.project.id);
  await s.client.api.sendDeviceMessage({ params: ids, body: { type: "alloc" } });
  await waitUntil(async () =>
    (await s.logs(device.id)).some((l) =>
      /memory limit exceeded: the project's scripts reached the 32 MB cap/.test(l),
    ),
  );
  assert.ok(await health());
  // the project's scripts restart on their own, with the device still connected
  await waitUntil(() => s.server.services.scripts.runningDeployment(s.project.id) === before);
  assert.equal(sim.connected, true);
  const delivered = await s.client.api.sendDeviceMessage({ params: ids, body: { type: "noop" } });
  assert.equal(delivered.delivered, true);
});

test("redeploy swaps the script without dropping the device; a failed deploy keeps the old one; rollback", async (t) => {
  const s = await setup(t);
  const version = (n: number) => `import { DeviceScript } from "@sdk/device";
export default class V${n} extends DeviceScript {
  onDeviceConnect() { console.log("v${n} connected"); }
  onDeviceDisconnect() { console.log("v${n} disconnected"); }
  onMessage(msg) { console.log("v${n} got " + msg.type); }
}`;
  const v1 = await deploy(t, s.client, s.project.id, version(1));
  const { sim, ids, device } = await s.addDevice();
  let drops = 0;
  sim.on("disconnected", () => drops++);
  sim.start();
  await sim.waitFor("connected");
  await waitUntil(async () => (await s.logs(device.id)).includes("v1 connected"));

  const v2 = await deploy(t, s.client, s.project.id, version(2));
  assert.equal(v2.status, "active");
  assert.equal(v2.version, 2);
  await waitUntil(async () => (await s.logs(device.id)).includes("v2 connected"));
  const logs = await s.logs(device.id);
  assert.ok(
    logs.indexOf("v1 disconnected") < logs.indexOf("v2 connected"),
    "old instance said goodbye before the new one started",
  );
  await s.client.api.sendDeviceMessage({ params: ids, body: { type: "ping" } });
  await waitUntil(async () => (await s.logs(device.id)).includes("v2 got ping"));

  const broken = await deploy(
    t,
    s.client,
    s.project.id,
    `import { DeviceScript } from "@sdk/device";
const config = JSON.parse("{ not json");
export default class Broken extends DeviceScript {}`,
  );
  assert.equal(broken.status, "failed");
  assert.equal(broken.version, 3);
  assert.match(broken.error!, /SyntaxError/);
  assert.match(broken.error!, /src\/index\.ts:2/, "the error points at the TypeScript source line");
  assert.equal(s.server.services.scripts.runningDeployment(s.project.id), v2.id, "v2 still runs");

  const rolledBack = await s.client.api.activateDeployment({
    params: { projectId: s.project.id, deploymentId: v1.id },
  });
  assert.equal(rolledBack.status, "active");
  await waitUntil(async () => (await s.logs(device.id)).filter((l) => l === "v1 connected").length === 2);
  const list = await s.client.api.listDeployments({ params: { projectId: s.project.id } });
  assert.deepEqual(
    list.map((d) => [d.version, d.status]),
    [
      [3, "failed"],
      [2, "inactive"],
      [1, "active"],
    ],
  );
  for (const d of list) assert.ok(d.createdBy && d.createdAt);
  await assert.rejects(
    s.client.api.activateDeployment({ params: { projectId: s.project.id, deploymentId: broken.id } }),
    (e: any) => e.code === "conflict",
  );
  assert.equal(drops, 0, "the device connection never dropped");
  assert.equal(sim.connected, true);
});

test("an env var change reaches the running instance; entities are readable for the project", async (t) => {
  const s = await setup(t);
  await s.client.api.setEnvVar({
    params: { projectId: s.project.id, name: "GREETING" },
    body: { value: "hello" },
  });
  await deploy(
    t,
    s.client,
    s.project.id,
    `import { DeviceScript } from "@sdk/device";
export default class Greeter extends DeviceScript<{ GREETING: string }> {
  onMessage() { console.log("greeting=" + this.env.GREETING); }
}`,
    {
      entities: [
        { id: "temperature", kind: "sensor", name: "Temperature", unit: "°C", deviceClass: "temperature" },
      ],
    },
  );
  const { ids, device } = await s.runningDevice();
  await s.client.api.sendDeviceMessage({ params: ids, body: { type: "say" } });
  await waitUntil(async () => (await s.logs(device.id)).includes("greeting=hello"));
  await s.client.api.setEnvVar({
    params: { projectId: s.project.id, name: "GREETING" },
    body: { value: "bonjour" },
  });
  // The change is in the running script once the request has answered: one message shows it.
  await s.client.api.sendDeviceMessage({ params: ids, body: { type: "say" } });
  await waitUntil(
    async () => (await s.logs(device.id)).filter((l) => l.startsWith("greeting=")).length === 2,
  );
  assert.ok((await s.logs(device.id)).includes("greeting=bonjour"));
  assert.deepEqual(await s.client.api.listEntities({ params: { projectId: s.project.id } }), [
    { id: "temperature", kind: "sensor", name: "Temperature", unit: "°C", deviceClass: "temperature" },
  ]);
});

test("two projects run at once without seeing each other", async (t) => {
  const s = await setup(t);
  const other = await s.client.api.createProject({ body: { name: "other" } });
  await s.client.api.setEnvVar({
    params: { projectId: s.project.id, name: "SECRET" },
    body: { value: "one" },
  });
  await s.client.api.setEnvVar({ params: { projectId: other.id, name: "SECRET" }, body: { value: "two" } });
  const script = `import { DeviceScript } from "@sdk/device";
(globalThis as any).shared = ((globalThis as any).shared ?? 0) + 1;
export default class Probe extends DeviceScript {
  onMessage() { console.log("secret=" + this.env.SECRET + " shared=" + (globalThis as any).shared); }
}`;
  await deploy(t, s.client, s.project.id, script);
  await deploy(t, s.client, other.id, script);
  const a = await s.addDevice("a");
  const b = await s.addDevice("b", other.id);
  a.sim.start();
  b.sim.start();
  await Promise.all([a.sim.waitFor("connected"), b.sim.waitFor("connected")]);
  await waitUntil(
    () =>
      s.server.services.scripts.runningDeployment(s.project.id) !== null &&
      s.server.services.scripts.runningDeployment(other.id) !== null,
  );
  await s.client.api.sendDeviceMessage({ params: a.ids, body: { type: "probe" } });
  await s.client.api.sendDeviceMessage({ params: b.ids, body: { type: "probe" } });
  await waitUntil(async () => (await s.logs(a.device.id)).some((l) => l.startsWith("secret=")));
  await waitUntil(async () => (await s.logs(b.device.id, other.id)).some((l) => l.startsWith("secret=")));
  assert.ok((await s.logs(a.device.id)).includes("secret=one shared=1"));
  assert.ok((await s.logs(b.device.id, other.id)).includes("secret=two shared=1"));
});

test("an uncaught error is logged with its stack mapped to the TypeScript source", async (t) => {
  const s = await setup(t);
  await deploy(
    t,
    s.client,
    s.project.id,
    `import { DeviceScript } from "@sdk/device";

function explode(): never {
  throw new RangeError("the sensor value is out of range");
}

export default class Thrower extends DeviceScript {
  async onMessage() {
    await Promise.resolve();
    explode();
  }
}`,
  );
  const { ids, device } = await s.runningDevice();
  await s.client.api.sendDeviceMessage({ params: ids, body: { type: "go" } });
  await waitUntil(async () => (await s.logs(device.id)).some((l) => l.startsWith("RangeError")));
  const entry = (await s.logs(device.id)).find((l) => l.startsWith("RangeError"))!;
  assert.match(entry, /^RangeError: the sensor value is out of range\n/);
  assert.match(entry, /at explode \(src\/index\.ts:4:\d+\)/);
  assert.match(entry, /at onMessage \(src\/index\.ts:10:5\)/);
  assert.doesNotMatch(entry, /script\.js|packages\/device/, "no bundle positions or library frames");
});

test("messages to a device without a running script, or offline, are refused clearly", async (t) => {
  const s = await setup(t);
  const { sim, ids } = await s.addDevice();
  await assert.rejects(
    s.client.api.sendDeviceMessage({ params: ids, body: { type: "x" } }),
    (e: any) => e.code === "device_offline",
  );
  sim.start();
  await sim.waitFor("connected");
  await assert.rejects(
    s.client.api.sendDeviceMessage({ params: ids, body: { type: "x" } }),
    (e: any) => e.code === "no_script",
  );
  await assert.rejects(
    s.client.api.sendDeviceMessage({ params: ids, body: { type: "Not Valid" } }),
    (e: any) => e.code === "invalid_request",
  );
});
