// deploy/cluster/nginx.conf for real, where nginx is installed (`apt-get install nginx-light`): the
// file as shipped, with only its upstream addresses and its port pointed at this machine, in front
// of a real server and an address where nothing listens (an instance that is down). REST, a board's
// socket and a watch socket all go through it.
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { type TestContext, test } from "node:test";
import { fileURLToPath } from "node:url";
import { SdkClient } from "@sdk/client";
import { SimulatedDevice } from "@sdk/simulator";
import { boundedFetch, freePort, startServerProcess, tempDir, waitUntil } from "@sdk/test-helpers";
import WebSocket from "ws";

const conf = fileURLToPath(new URL("../deploy/cluster/nginx.conf", import.meta.url));
const hasNginx = spawnSync("sh", ["-c", "command -v nginx"], { stdio: "ignore" }).status === 0;

const accepts = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = net.connect({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });

/** nginx with the shipped config, its upstreams replaced by `upstreams` (in order), on a free port. */
async function nginx(t: TestContext, upstreams: number[]): Promise<number> {
  const dir = tempDir(t, "sdk-nginx-");
  const port = await freePort();
  let i = 0;
  const text = fs
    .readFileSync(conf, "utf8")
    .replace(/^(\s*server\s+)sdk\d+:8080/gm, (_, lead: string) => `${lead}127.0.0.1:${upstreams[i++]}`)
    .replace(/^(\s*)listen 8080;/m, `$1listen 127.0.0.1:${port};`)
    // Scratch files under the test's directory, not the system's.
    .replace(
      /^http \{/m,
      `http {\n${["client_body", "proxy", "fastcgi", "uwsgi", "scgi"]
        .map((k) => `  ${k}_temp_path ${path.join(dir, k)};`)
        .join("\n")}`,
    );
  assert.equal(i, upstreams.length, "every upstream server line was replaced");
  const file = path.join(dir, "nginx.conf");
  fs.writeFileSync(file, text);
  const root = process.getuid?.() === 0 ? "user root; " : "";
  const globals = `${root}daemon off; pid ${path.join(dir, "nginx.pid")}; error_log stderr warn;`;
  const child = spawn("nginx", ["-p", dir, "-c", file, "-g", globals], { stdio: ["ignore", "pipe", "pipe"] });
  let err = "";
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    err += chunk;
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  t.after(async () => {
    child.kill("SIGTERM");
    await exited;
  });
  await waitUntil(
    async () => {
      if (child.exitCode !== null) throw new Error(`nginx exited (${child.exitCode}):\n${err}`);
      return accepts(port);
    },
    10_000,
    "nginx listening",
  );
  return port;
}

test("the cluster's nginx.conf: REST, a board and a watcher through it, past an instance that is down", async (t) => {
  if (!hasNginx) {
    t.skip(
      "nginx is not installed (apt-get install nginx-light): the proxy config is only checked by reading it",
    );
    return;
  }
  const server = await startServerProcess(t, undefined, { TRUST_PROXY: "true" });
  const down = await freePort();
  const port = await nginx(t, [down, server.port, down]);
  const base = `http://127.0.0.1:${port}`;

  const health = await fetch(`${base}/health`, { signal: AbortSignal.timeout(10_000) });
  assert.equal(health.status, 200, "answered by the live instance");
  const anon = new SdkClient({ baseUrl: base, fetch: boundedFetch(15_000) });
  const auth = await anon.api.register({
    body: { email: "a@example.com", password: "correct horse battery", issueToken: true },
  });
  const client = new SdkClient({ baseUrl: base, token: auth.token!.token, fetch: boundedFetch(15_000) });
  const project = await client.api.createProject({ body: { name: "p" } });
  const { device, credentials } = await client.api.createDevice({
    params: { projectId: project.id },
    body: { name: "d", board: "pico_w" },
  });
  const ids = { projectId: project.id, deviceId: device.id };

  // The board's socket: upgraded through the proxy.
  const sim = new SimulatedDevice({
    server: `127.0.0.1:${port}`,
    deviceId: credentials.deviceId,
    secret: credentials.secret,
    reconnect: false,
  });
  t.after(() => sim.stop());
  sim.start();
  await sim.waitFor("connected");

  // A watcher through the proxy hears the board's state.
  const watch = new WebSocket(
    `ws://127.0.0.1:${port}/v1/projects/${ids.projectId}/devices/${ids.deviceId}/watch`,
    {
      headers: { authorization: `Bearer ${auth.token!.token}` },
    },
  );
  t.after(() => watch.terminate());
  const events: any[] = [];
  watch.on("message", (data) => events.push(JSON.parse(data.toString())));
  await waitUntil(() => events.some((e) => e.type === "snapshot"), 10_000, "the snapshot through the proxy");
  sim.sendState("temperature", 21.5);
  await waitUntil(
    () => events.some((e) => e.type === "state" && e.entityId === "temperature" && e.value === 21.5),
    10_000,
    "the state event through the proxy",
  );

  // A command through the proxy reaches the board; the answer comes back.
  await client.api.sendDeviceCommand({
    params: ids,
    body: { type: "gpio_write", args: { pin: 2, value: 1 } },
  });
  assert.equal(sim.pin(2).output, 1);
});
