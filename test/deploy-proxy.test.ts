// deploy/cluster/nginx.conf for real, where nginx is installed (`apt-get install nginx-light`): the
// file as shipped, with only its upstream addresses and its port pointed at this machine. In front
// of a server and an address where nothing listens (an instance that is down), then in front of
// two instances of a cluster, one of which stops: REST, a board's socket and a watch socket all go
// through it, as they do in deploy/compose.cluster.yaml.
import assert from "node:assert/strict";
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { after, type TestContext, test } from "node:test";
import { fileURLToPath } from "node:url";
import { SdkClient } from "@sdk/client";
import { SimulatedDevice } from "@sdk/simulator";
import { boundedFetch, freePort, startServerProcess, tempDir, waitUntil } from "@sdk/test-helpers";
import WebSocket from "ws";

const conf = fileURLToPath(new URL("../deploy/cluster/nginx.conf", import.meta.url));
const hasNginx = spawnSync("sh", ["-c", "command -v nginx"], { stdio: "ignore" }).status === 0;

const postgresBase = process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const natsUrl = process.env.TEST_NATS_URL ?? "nats://127.0.0.1:4222";

/** psql against the test database (the root's tests have no PostgreSQL client of their own). */
const psql = (statement: string) =>
  execFileSync("psql", [postgresBase, "-v", "ON_ERROR_STOP=1", "-tAc", statement], {
    encoding: "utf8",
    timeout: 15_000,
    stdio: ["ignore", "pipe", "pipe"],
  }).trim();

/** Dropped once every test of this file, and the servers it started, are done (not in the test's
 * own `after`, which would run before the later-added ones that stop the servers). */
const schemas: string[] = [];
after(() => {
  for (const schema of schemas.splice(0)) psql(`drop schema if exists ${schema} cascade`);
});

/**
 * A fresh schema of the test database (dropped at the end) and the NATS of the tests, or null after
 * skipping with the reason (a failure in CI, as packages/server/test/helpers/postgres.ts and nats.ts do).
 */
async function clusterBackends(t: TestContext): Promise<{ databaseUrl: string; natsUrl: string } | null> {
  const missing: string[] = [];
  try {
    psql("select 1");
  } catch {
    missing.push(`PostgreSQL at ${postgresBase} (with psql)`);
  }
  const { hostname, port } = new URL(natsUrl);
  const greets = await new Promise<boolean>((resolve) => {
    const socket = net.connect({ host: hostname, port: Number(port || 4222) });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(2_000, () => done(false));
    socket.once("error", () => done(false));
    socket.once("data", (data) => done(data.toString("latin1").startsWith("INFO ")));
  });
  if (!greets) missing.push(`NATS at ${natsUrl}`);
  if (missing.length > 0) {
    if (process.env.CI) throw new Error(`the proxy's cluster test needs ${missing.join(" and ")} in CI`);
    t.skip(`needs ${missing.join(" and ")}`);
    return null;
  }
  const schema = `sdk_test_${randomBytes(6).toString("hex")}`;
  psql(`create schema ${schema}`);
  schemas.push(schema);
  const url = new URL(postgresBase);
  url.searchParams.set("options", `-c search_path=${schema} -c max_parallel_workers_per_gather=0`);
  return { databaseUrl: url.toString(), natsUrl };
}

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

/** A watch socket for the device through the proxy; its events, and its close. */
function watchThrough(
  t: TestContext,
  port: number,
  ids: { projectId: string; deviceId: string },
  token: string,
) {
  const ws = new WebSocket(
    `ws://127.0.0.1:${port}/v1/projects/${ids.projectId}/devices/${ids.deviceId}/watch`,
    {
      headers: { authorization: `Bearer ${token}` },
    },
  );
  t.after(() => ws.terminate());
  const events: any[] = [];
  ws.on("message", (data) => events.push(JSON.parse(data.toString())));
  const closed = new Promise<number>((resolve) => ws.on("close", (code) => resolve(code)));
  return { ws, events, closed };
}

test("the cluster's nginx.conf in front of two instances: one stops, its board comes back through the other", async (t) => {
  if (!hasNginx) {
    t.skip("nginx is not installed (apt-get install nginx-light)");
    return;
  }
  const backends = await clusterBackends(t);
  if (!backends) return;
  const { databaseUrl } = backends;
  const keyFile = path.join(tempDir(t, "sdk-proxy-key-"), "secret.key");
  fs.writeFileSync(keyFile, randomBytes(32).toString("base64"), { mode: 0o600 });
  const clusterName = `proxy-${randomBytes(4).toString("hex")}`;
  const env = (id: string) => ({
    DATABASE_URL: databaseUrl,
    NATS_URL: backends.natsUrl,
    CLUSTER_NAME: clusterName,
    INSTANCE_ID: id,
    SECRET_KEY_FILE: keyFile,
    TRUST_PROXY: "true",
  });
  const a = await startServerProcess(t, undefined, env("a"));
  const b = await startServerProcess(t, undefined, env("b"));
  const port = await nginx(t, [a.port, b.port, await freePort()]);
  const base = `http://127.0.0.1:${port}`;

  const anon = new SdkClient({ baseUrl: base, fetch: boundedFetch(15_000) });
  const auth = await anon.api.register({
    body: { email: "a@example.com", password: "correct horse battery", issueToken: true },
  });
  const token = auth.token!.token;
  const client = new SdkClient({ baseUrl: base, token, fetch: boundedFetch(15_000) });
  const project = await client.api.createProject({ body: { name: "p" } });
  const { device, credentials } = await client.api.createDevice({
    params: { projectId: project.id },
    body: { name: "d", board: "pico_w" },
  });
  const ids = { projectId: project.id, deviceId: device.id };

  const sim = new SimulatedDevice({
    server: `127.0.0.1:${port}`,
    deviceId: credentials.deviceId,
    secret: credentials.secret,
    reconnect: { baseMs: 100, capMs: 500 },
  });
  t.after(() => sim.stop());
  sim.start();
  await sim.waitFor("connected");
  let watcher = watchThrough(t, port, ids, token);
  await waitUntil(() => watcher.events.some((e) => e.type === "snapshot"), 10_000, "a snapshot");
  sim.sendState("temperature", 1);
  await waitUntil(
    () => watcher.events.some((e) => e.type === "state" && e.value === 1),
    10_000,
    "the board's state, wherever the proxy put the board and the watcher",
  );

  // Stop the instance serving the board, cleanly (as `docker compose stop` does).
  const schema = /search_path=(\S+)/.exec(new URL(databaseUrl).searchParams.get("options") ?? "")?.[1];
  const ownerOf = async () => psql(`select instance_id from ${schema}.devices where id = '${device.id}'`);
  let owner = "";
  await waitUntil(
    async () => {
      owner = await ownerOf();
      return owner === "a" || owner === "b";
    },
    10_000,
    "the board's owner in the database",
  );
  const [stopping, staying] = owner === "a" ? [a, b] : [b, a];
  const back = sim.waitFor("connected", 20_000);
  await stopping.stop("SIGTERM");
  await back;
  const other = owner === "a" ? "b" : "a";
  await waitUntil(async () => (await ownerOf()) === other, 10_000, "the board served by the other instance");
  assert.ok(staying.running(), "the other instance goes on");

  // The watcher: still there if it was on the other instance, else reopened through the proxy.
  if (watcher.ws.readyState !== WebSocket.OPEN) watcher = watchThrough(t, port, ids, token);
  await waitUntil(() => watcher.events.some((e) => e.type === "snapshot"), 10_000, "a snapshot");
  await waitUntil(
    async () => (await client.api.getDevice({ params: ids })).status === "online",
    10_000,
    "online through the proxy",
  );
  sim.sendState("temperature", 2);
  await waitUntil(
    () => watcher.events.some((e) => e.type === "state" && e.value === 2),
    10_000,
    "the board's state after the move",
  );
  await client.api.sendDeviceCommand({
    params: ids,
    body: { type: "gpio_write", args: { pin: 4, value: 1 } },
  });
  assert.equal(sim.pin(4).output, 1, "a command through the proxy reaches the board on the other instance");
});
