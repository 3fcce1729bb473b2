import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { type TestContext, test } from "node:test";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { SdkClient } from "@sdk/client";
import { SimulatedDevice } from "@sdk/simulator";
import { startServerProcess, syntheticRelease, tempDir, waitUntil } from "@sdk/test-helpers";

const bin = fileURLToPath(new URL("../bin/sdk-mcp.mjs", import.meta.url));

/** A server whose bundled firmware has release 2.0.0 for the Pico W (newer than the boards' 1.0.0). */
async function startServer(t: TestContext): Promise<string> {
  const releases = tempDir(t, "sdk-mcp-releases-");
  fs.mkdirSync(path.join(releases, "2.0.0"));
  fs.writeFileSync(
    path.join(releases, "2.0.0", "pico_w.uf2"),
    syntheticRelease({ board: "pico_w", version: "2.0.0" }),
  );
  const env = { LOG_LEVEL: "warn", FIRMWARE_DIR: releases };
  return (await startServerProcess(t, tempDir(t, "sdk-mcp-data-"), env)).url;
}

async function connectMcp(t: TestContext, env: Record<string, string>) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [bin],
    env: { PATH: process.env.PATH ?? "", ...env },
    stderr: "pipe",
  });
  const client = new Client({ name: "sdk-test", version: "1.0.0" });
  await client.connect(transport);
  t.after(() => client.close());
  return client;
}

const text = (result: Awaited<ReturnType<Client["callTool"]>>) =>
  (result.content as { type: string; text: string }[]).map((c) => c.text).join("\n");

test("sdk-mcp exposes exactly 7 tools, and an agent can build, deploy and observe a script end to end", async (t) => {
  const url = await startServer(t);
  const api = new SdkClient({ baseUrl: url });
  const auth = await api.api.register({
    body: { email: "agent@example.com", password: "correct horse battery", issueToken: true },
  });
  const token = auth.token!.token;
  const user = new SdkClient({ baseUrl: url, token });
  const project = await user.api.createProject({ body: { name: "agent's" } });
  const { device, credentials } = await user.api.createDevice({
    params: { projectId: project.id },
    body: { name: "bench", board: "pico_w" },
  });

  // the same credentials file the CLI writes
  const home = tempDir(t, "sdk-mcp-home-");
  fs.mkdirSync(path.join(home, ".sdk"));
  fs.writeFileSync(
    path.join(home, ".sdk", "credentials.json"),
    JSON.stringify({
      version: 1,
      current: url,
      hosts: {
        [url]: {
          token,
          tokenId: auth.token!.id,
          email: "agent@example.com",
          userId: auth.user.id,
          savedAt: new Date().toISOString(),
        },
      },
    }),
    { mode: 0o600 },
  );
  const mcp = await connectMcp(t, { HOME: home });

  const { tools } = await mcp.listTools();
  assert.deepEqual(tools.map((tool) => tool.name).sort(), [
    "build",
    "deploy",
    "get_device",
    "get_logs",
    "list_devices",
    "list_projects",
    "send_message",
  ]);
  for (const tool of tools) {
    assert.equal(tool.inputSchema.type, "object", tool.name);
    assert.ok(
      tool.description && tool.description.length > 40,
      `${tool.name} has a description written for an agent`,
    );
  }
  assert.deepEqual(tools.find((x) => x.name === "get_device")!.inputSchema.required?.sort(), [
    "deviceId",
    "projectId",
  ]);

  const resources = await mcp.listResources();
  assert.ok(resources.resources.some((r) => r.uri === "sdk://reference/device-api"));
  const read = async (uri: string) => {
    const content = (await mcp.readResource({ uri })).contents[0]!;
    return "text" in content ? content.text : "";
  };
  assert.match(await read("sdk://reference/device-api"), /this\.env\.DEVICE/);
  const boards = JSON.parse(await read("sdk://reference/boards"));
  assert.deepEqual(boards.boards.pico_w.adcPins, [26, 27, 28]);

  const listed = await mcp.callTool({ name: "list_projects", arguments: {} });
  assert.equal(listed.isError, undefined);
  assert.deepEqual(
    (listed.structuredContent as { projects: { id: string }[] }).projects.map((p) => p.id),
    [project.id],
  );
  assert.match(text(listed), new RegExp(project.id));

  // a project on disk, as the agent would write it
  const dir = tempDir(t, "sdk-mcp-project-");
  fs.mkdirSync(path.join(dir, "src"));
  fs.writeFileSync(
    path.join(dir, "sdk.ts"),
    `import { defineConfig } from "@sdk/device";\nexport default defineConfig({ project: "${project.id}", board: "pico_w" });\n`,
  );
  fs.writeFileSync(
    path.join(dir, "src", "index.ts"),
    `import { DeviceScript } from "@sdk/device";\nexport default class Main extends DeviceScript {\n  onDeviceConnect() { const x: number = "oops"; }\n}\n`,
  );
  const broken = await mcp.callTool({ name: "build", arguments: { projectDir: dir } });
  assert.equal(broken.isError, true);
  const diagnostics = (
    broken.structuredContent as { diagnostics: { file: string; line: number; column: number }[] }
  ).diagnostics;
  assert.deepEqual(
    diagnostics.map((d) => [d.file, d.line]),
    [["src/index.ts", 3]],
  );
  assert.match(text(broken), /src\/index\.ts:3:\d+ - error TS2322/);

  fs.writeFileSync(
    path.join(dir, "src", "index.ts"),
    `import { DeviceScript, GP26 } from "@sdk/device";
export default class Main extends DeviceScript {
  async onDeviceConnect() {
    const { volts } = await this.env.DEVICE.adcRead(GP26);
    this.env.DEVICE.emitState("voltage", volts);
  }
  onMessage(msg) { console.log("agent says " + msg.text); }
}
`,
  );
  const built = await mcp.callTool({ name: "build", arguments: { projectDir: dir } });
  assert.equal(built.isError, undefined, text(built));
  const deployed = await mcp.callTool({ name: "deploy", arguments: { projectDir: dir } });
  assert.equal(deployed.isError, undefined, text(deployed));
  assert.equal(
    (deployed.structuredContent as { deployment: { status: string } }).deployment.status,
    "active",
  );

  const sim = new SimulatedDevice({
    server: new URL(url).host,
    deviceId: credentials.deviceId,
    secret: credentials.secret,
    firmware: "1.0.0",
    reconnect: false,
  });
  t.after(() => sim.stop());
  sim.setVoltage(26, 2.5);
  sim.start();
  await sim.waitFor("connected");

  const devices = await mcp.callTool({ name: "list_devices", arguments: { projectId: project.id } });
  assert.match(text(devices), new RegExp(`${device.id}.*online`));
  await waitUntil(
    async () => {
      const got = await mcp.callTool({
        name: "get_device",
        arguments: { projectId: project.id, deviceId: device.id },
      });
      const state = (got.structuredContent as { state: { entityId: string; value: number }[] }).state;
      assert.match(text(got), /firmware 1\.0\.0 \(release 2\.0\.0 is newer: sdk flash --device dev_/);
      return state.some((s) => s.entityId === "voltage" && Math.abs(s.value - 2.5) < 0.01);
    },
    10_000,
    "the device's state to show the script's emitState",
  );

  const sent = await mcp.callTool({
    name: "send_message",
    arguments: {
      projectId: project.id,
      deviceId: device.id,
      message: { type: "note", text: "hi from the agent" },
    },
  });
  assert.deepEqual(sent.structuredContent, { delivered: true });
  await waitUntil(
    async () => {
      const logs = await mcp.callTool({
        name: "get_logs",
        arguments: { projectId: project.id, deviceId: device.id, level: "info" },
      });
      return text(logs).includes("agent says hi from the agent");
    },
    10_000,
    "the script to log the message",
  );
  const errorsOnly = await mcp.callTool({
    name: "get_logs",
    arguments: { projectId: project.id, level: "error" },
  });
  assert.equal((errorsOnly.structuredContent as { logs: unknown[] }).logs.length, 0);

  // bad input and server errors are tool errors, and the server keeps serving
  const bad = await mcp.callTool({ name: "get_device", arguments: { projectId: "nope" } });
  assert.equal(bad.isError, true);
  const missing = await mcp.callTool({
    name: "get_device",
    arguments: { projectId: project.id, deviceId: "dev_aaaaaaaaaaaaaaaaaaaa" },
  });
  assert.equal(missing.isError, true);
  assert.deepEqual(Object.keys((missing.structuredContent as { error: object }).error).sort(), [
    "code",
    "docs",
    "message",
  ]);
  assert.match(text(missing), /not_found/);
  assert.match(text(missing), /\/docs\/errors#not_found/);
  const offline = await mcp.callTool({
    name: "send_message",
    arguments: { projectId: project.id, deviceId: device.id, message: { type: "Bad Type" } },
  });
  assert.equal(offline.isError, true);
  assert.equal((await mcp.callTool({ name: "list_projects", arguments: {} })).isError, undefined);
});

test("without a login every tool answers with an error telling the agent to run sdk login", async (t) => {
  const home = tempDir(t, "sdk-mcp-empty-");
  const mcp = await connectMcp(t, { HOME: home });
  const result = await mcp.callTool({ name: "list_projects", arguments: {} });
  assert.equal(result.isError, true);
  assert.match(text(result), /sdk login --host/);
  assert.equal((result.structuredContent as { error: { code: string } }).error.code, "not_logged_in");
});

test("stdout carries only MCP messages", async (t) => {
  const home = tempDir(t, "sdk-mcp-raw-");
  const child = spawn(process.execPath, [bin], {
    env: { PATH: process.env.PATH ?? "", HOME: home },
    stdio: ["pipe", "pipe", "pipe"],
  });
  t.after(() => child.kill("SIGKILL"));
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d) => {
    stdout += d;
  });
  child.stderr.on("data", (d) => {
    stderr += d;
  });
  const send = (message: object) => child.stdin.write(`${JSON.stringify(message)}\n`);
  send({
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
  });
  send({ jsonrpc: "2.0", method: "notifications/initialized" });
  send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "list_projects", arguments: {} } });
  send({
    jsonrpc: "2.0",
    id: 3,
    method: "tools/call",
    params: { name: "build", arguments: { projectDir: home } },
  });
  // Count whole lines only: a long answer can arrive in several chunks.
  await waitUntil(() => stdout.split("\n").length - 1 >= 3, 15_000, "three answers on stdout").catch(
    () => {},
  ); // the assertion below shows what came
  const lines = stdout.trim().split("\n");
  assert.equal(lines.length, 3, stdout);
  for (const line of lines) assert.equal(JSON.parse(line).jsonrpc, "2.0");
  assert.match(stderr, /ready on stdio/, "diagnostics go to stderr");
});
