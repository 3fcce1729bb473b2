// The MCP deploy tool's canary: a short window is waited for (promoted, with the rollout in the
// result), a long one returns once it started, and canaryAction reports on it and rolls it back.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { type TestContext, test } from "node:test";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { SdkClient } from "@sdk/client";
import type { Deployment, Rollout } from "@sdk/protocol";
import { SimulatedDevice } from "@sdk/simulator";
import { startServerProcess, tempDir } from "@sdk/test-helpers";

const bin = fileURLToPath(new URL("../bin/sdk-mcp.mjs", import.meta.url));

async function agent(t: TestContext) {
  const url = (await startServerProcess(t, tempDir(t, "sdk-mcp-canary-data-"), { LOG_LEVEL: "warn" })).url;
  const auth = await new SdkClient({ baseUrl: url }).api.register({
    body: { email: "agent@example.com", password: "correct horse battery", issueToken: true },
  });
  const user = new SdkClient({ baseUrl: url, token: auth.token!.token });
  const project = await user.api.createProject({ body: { name: "canary" } });
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [bin],
    env: {
      PATH: process.env.PATH ?? "",
      HOME: tempDir(t, "sdk-mcp-canary-home-"),
      SDK_TOKEN: auth.token!.token,
      SDK_HOST: url,
    },
    stderr: "pipe",
  });
  const mcp = new Client({ name: "sdk-test", version: "1.0.0" });
  await mcp.connect(transport);
  t.after(() => mcp.close());
  return { url, user, project, mcp };
}

const text = (result: Awaited<ReturnType<Client["callTool"]>>) =>
  (result.content as { type: string; text: string }[]).map((c) => c.text).join("\n");
const result = (r: Awaited<ReturnType<Client["callTool"]>>) =>
  r.structuredContent as { ok: boolean; deployment: Deployment; rollout: Rollout | null };

test("deploy with canary: a short window is waited for and promoted; a long one starts, canaryAction shows and rolls it back", async (t) => {
  const { url, user, project, mcp } = await agent(t);
  const { device, credentials } = await user.api.createDevice({
    params: { projectId: project.id },
    body: { name: "bench", board: "pico_w" },
  });
  await user.api.setDeviceTags({
    params: { projectId: project.id, deviceId: device.id },
    body: { tags: ["bench"] },
  });
  const sim = new SimulatedDevice({
    server: new URL(url).host,
    deviceId: credentials.deviceId,
    secret: credentials.secret,
    reconnect: false,
  });
  t.after(() => sim.stop());
  sim.start();
  await sim.waitFor("connected", 20_000);

  const dir = tempDir(t, "sdk-mcp-canary-project-");
  fs.mkdirSync(path.join(dir, "src"));
  fs.writeFileSync(
    path.join(dir, "sdk.ts"),
    `import { defineConfig } from "@sdk/device";\nexport default defineConfig({ project: "${project.id}", board: "pico_w" });\n`,
  );
  const write = (version: string) =>
    fs.writeFileSync(
      path.join(dir, "src", "index.ts"),
      `import { DeviceScript } from "@sdk/device";\nexport default class Main extends DeviceScript {\n  onDeviceConnect() { console.log("${version} up"); }\n}\n`,
    );
  const deploy = (args: Record<string, unknown>) =>
    mcp.callTool({ name: "deploy", arguments: { projectDir: dir, ...args } });

  write("v1");
  const first = await deploy({});
  assert.equal(first.isError, undefined, text(first));

  const noWindow = await deploy({ windowSeconds: 5 });
  assert.equal(noWindow.isError, true);
  assert.match(text(noWindow), /windowSeconds is the window of a canary/);
  const noRollback = await deploy({ canary: "bench", rollback: false });
  assert.equal(noRollback.isError, true);
  assert.match(text(noRollback), /bad_input: rollback:false is for a plain deploy/);
  const number = await deploy({ canary: "25" });
  assert.equal(number.isError, true);
  assert.match(text(number), /no_canary_devices: .*For a share of the connected devices, write canary "25%"/);

  write("v2");
  const short = await deploy({ canary: "bench", windowSeconds: 1 });
  assert.equal(short.isError, undefined, text(short));
  assert.equal(result(short).deployment.status, "active");
  assert.equal(result(short).rollout?.decision, "promoted");
  assert.match(text(short), /canary promoted/);

  write("v3");
  const long = await deploy({ canary: "100%", windowSeconds: 600 });
  assert.equal(long.isError, true, "100% is not a share the server takes");
  const started = await deploy({ canary: "50%", windowSeconds: 600 });
  assert.equal(started.isError, undefined, text(started));
  assert.equal(result(started).deployment.status, "canary");
  assert.deepEqual(result(started).rollout?.devices, [device.id]);
  assert.match(text(started), /Canary v\d is running on 1 device/);

  const status = await deploy({ canaryAction: "status" });
  assert.match(text(status), /Canary side: \d+ devices, \d+ calls/);
  const ended = await deploy({ canaryAction: "roll_back" });
  assert.equal(ended.isError, undefined, text(ended));
  assert.equal(result(ended).deployment.status, "rolled_back");
  const none = await deploy({ canaryAction: "promote" });
  assert.equal(none.isError, true);
  assert.match(text(none), /no canary running/);

  // A short-window canary whose onDeviceConnect throws on its device: rolled back, with the reason.
  fs.writeFileSync(
    path.join(dir, "src", "index.ts"),
    `import { DeviceScript } from "@sdk/device";\nexport default class Main extends DeviceScript {\n  onDeviceConnect() { throw new Error("cannot start"); }\n}\n`,
  );
  const bad = await deploy({ canary: "bench", windowSeconds: 30 });
  assert.equal(bad.isError, true, text(bad));
  assert.equal(result(bad).deployment.status, "rolled_back");
  assert.equal(result(bad).rollout?.decision, "rolled_back");
  assert.match(text(bad), /v\d+ was rolled back; the previous version stays live\. Reason: \S/);
  assert.doesNotMatch(text(bad), /Reason: rolled back:/, "the decision is not said twice");
  const live = await user.api.listDeployments({ params: { projectId: project.id } });
  assert.equal(
    live.find((d) => d.status === "active")?.id,
    result(short).deployment.id,
    "the promoted canary stays live",
  );
});
