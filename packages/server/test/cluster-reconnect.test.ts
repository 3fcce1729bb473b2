// The NATS connection outlives its server: a NATS server of this test's own is stopped and started
// again on the same port, and the instances' buses carry on.
import assert from "node:assert/strict";
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import net from "node:net";
import { type TestContext, test } from "node:test";
import { NatsEventBus } from "../src/cluster/event-bus.ts";
import { connectNats, type NatsConnection } from "../src/cluster/nats.ts";
import { type ClusterConfig, loadConfig } from "../src/config.ts";

/** nats-server from PATH, or where Debian's package puts it (a PATH without /usr/sbin). */
const binary =
  process.env.TEST_NATS_SERVER ??
  ["nats-server", "/usr/sbin/nats-server"].find((b) => spawnSync(b, ["--version"]).status === 0) ??
  "nats-server";
const available = spawnSync(binary, ["--version"]).status === 0;

async function freePort(): Promise<number> {
  const server = net.createServer().listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as net.AddressInfo;
  server.close();
  await once(server, "close");
  return port;
}

/** Starts nats-server on the port; resolves once it accepts clients. */
async function natsServer(t: TestContext, port: number): Promise<ChildProcess> {
  const child = spawn(binary, ["-a", "127.0.0.1", "-p", String(port)], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  t.after(() => child.kill("SIGKILL"));
  let output = "";
  await new Promise<void>((resolve, reject) => {
    child.stderr?.on("data", (chunk) => {
      output += chunk;
      if (output.includes("Server is ready")) resolve();
    });
    child.once("exit", (code) => reject(new Error(`nats-server exited (${code}): ${output}`)));
  });
  return child;
}

/** Log lines, and a way to wait for one. */
function logCollector() {
  const lines: string[] = [];
  const waiters: { match: RegExp; resolve: () => void }[] = [];
  const push = (line: string) => {
    lines.push(line);
    for (const w of waiters.splice(0))
      if (w.match.test(line)) w.resolve();
      else waiters.push(w);
  };
  return {
    lines,
    log: { info: push, warn: push, error: (_: { err: unknown }, m: string) => push(m) },
    line: (match: RegExp) =>
      lines.some((l) => match.test(l))
        ? Promise.resolve()
        : new Promise<void>((resolve) => waiters.push({ match, resolve })),
  };
}

test("NATS: a lost server is reconnected to, forever, with log lines; events flow again afterwards", {
  skip: available ? false : `${binary} not found (set TEST_NATS_SERVER to run this test)`,
}, async (t) => {
  const port = await freePort();
  let server = await natsServer(t, port);
  const config = loadConfig(
    {
      NATS_URL: `nats://user:pw@127.0.0.1:${port}`,
      DATABASE_URL: "postgres://unused",
      CLUSTER_NAME: "r",
      INSTANCE_ID: "i-a",
    },
    "/",
  ).cluster as ClusterConfig;
  const logs = [logCollector(), logCollector()];
  const [a, b] = (await Promise.all(logs.map((l) => connectNats(config, l.log)))) as [
    NatsConnection,
    NatsConnection,
  ];
  t.after(() => Promise.all([a.close(), b.close()]));
  const busA = new NatsEventBus(a, "r", (e) => assert.fail(e as Error));
  const busB = new NatsEventBus(b, "r", (e) => assert.fail(e as Error));
  const heard: number[] = [];
  let wanted: { n: number; resolve: () => void } | undefined;
  busB.subscribeDevice("dev_a", (e) => {
    if (e.type !== "device.state") return;
    heard.push(e.payload.value as number);
    if (wanted && e.payload.value === wanted.n) wanted.resolve();
  });
  const delivered = (n: number) => new Promise<void>((resolve) => (wanted = { n, resolve }));
  const state = (n: number) =>
    busA.publish("device.state", { projectId: "prj_1", deviceId: "dev_a", at: n, entityId: "x", value: n });
  await b.flush();
  let arrived = delivered(1);
  await state(1);
  await arrived;

  server.kill("SIGKILL");
  await Promise.all(logs.map((l) => l.line(/NATS: disconnected from 127\.0\.0\.1/)));
  server = await natsServer(t, port);
  await Promise.all(logs.map((l) => l.line(/NATS: reconnected to 127\.0\.0\.1/)));
  await b.flush(); // B's subscriptions are back on the new server
  arrived = delivered(2);
  await state(2);
  await arrived;
  assert.deepEqual(heard, [1, 2]);
  for (const l of logs)
    assert.ok(
      l.lines.every((line) => !line.includes("pw")),
      "no credentials in the logs",
    );
});
