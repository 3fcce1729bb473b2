// The NATS connection outlives its server: a NATS server of this test's own is stopped and started
// again on the same port, and the instances' buses carry on.
import assert from "node:assert/strict";
import { once } from "node:events";
import net from "node:net";
import { type TestContext, test } from "node:test";
import { NatsCommandRouter } from "../src/cluster/command-router.ts";
import { NatsEventBus } from "../src/cluster/event-bus.ts";
import { connectNats, type NatsConnection, NatsLink, outboxLimit } from "../src/cluster/nats.ts";
import { type ClusterConfig, loadConfig } from "../src/config.ts";
import type { AppError } from "../src/errors.ts";
import { freePort, logCollector, ownNatsServer as natsServer, noNatsServer } from "./helpers/nats.ts";

/**
 * device.state events of one device, published on A's bus (`state(n)`, value n) and heard on B's
 * (`heard`; `delivered(n)` resolves once B hears n); resolves once B heard the first (1).
 */
async function deviceStates(a: NatsConnection, b: NatsConnection, clusterName: string) {
  const busA = new NatsEventBus(a, clusterName, (e) => assert.fail(e as Error));
  const busB = new NatsEventBus(b, clusterName, (e) => assert.fail(e as Error));
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
  const arrived = delivered(1);
  await state(1);
  await arrived;
  return { heard, delivered, state };
}

test("NATS: a lost server is reconnected to, forever, with log lines; events flow again afterwards", {
  skip: noNatsServer,
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
  const { heard, delivered, state } = await deviceStates(a, b, "r");

  server.kill("SIGKILL");
  await Promise.all(logs.map((l) => l.line(/NATS: disconnected from 127\.0\.0\.1/)));
  server = await natsServer(t, port);
  await Promise.all(logs.map((l) => l.line(/NATS: reconnected to 127\.0\.0\.1/)));
  await b.flush(); // B's subscriptions are back on the new server
  const arrived = delivered(2);
  await state(2);
  await arrived;
  assert.deepEqual(heard, [1, 2]);
  for (const l of logs)
    assert.ok(
      l.lines.every((line) => !line.includes("pw")),
      "no credentials in the logs",
    );
});

/** A TCP proxy to a port that the test can cut (every connection through it drops, new ones are refused) and restore. */
async function cuttableProxy(t: TestContext, target: number) {
  const sockets = new Set<net.Socket>();
  let open = true;
  const server = net.createServer((client) => {
    if (!open) return client.destroy();
    const upstream = net.connect(target, "127.0.0.1");
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on("error", end).on("close", end);
    }
    client.pipe(upstream).pipe(client);
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  t.after(() => {
    for (const s of sockets) s.destroy();
    server.close();
  });
  return {
    port: (server.address() as net.AddressInfo).port,
    cut() {
      open = false;
      for (const s of sockets) s.destroy();
    },
    restore() {
      open = true;
    },
  };
}

test("NATS: what an instance publishes while NATS is unreachable is sent once it is back, in order, up to the outbox's bound; routed requests are refused meanwhile", {
  skip: noNatsServer,
}, async (t) => {
  const port = await freePort();
  await natsServer(t, port);
  const proxy = await cuttableProxy(t, port);
  const config = (url: string, id: string) =>
    loadConfig({ NATS_URL: url, DATABASE_URL: "postgres://unused", CLUSTER_NAME: "o", INSTANCE_ID: id }, "/")
      .cluster as ClusterConfig;
  const logA = logCollector();
  // A reaches NATS through the proxy (which the test cuts), B directly.
  const a = await connectNats(config(`nats://127.0.0.1:${proxy.port}`, "i-a"), logA.log);
  const b = await connectNats(config(`nats://127.0.0.1:${port}`, "i-b"), logCollector().log);
  t.after(() => Promise.all([a.close(), b.close()]));
  const linkA = NatsLink.of(a, logA.log);
  let reconnects = 0;
  linkA.onReconnect(() => reconnects++);
  const { heard, delivered, state } = await deviceStates(a, b, "o");

  proxy.cut();
  await logA.line(/NATS: disconnected from 127\.0\.0\.1/);
  assert.equal(linkA.connected, false);
  // A routed request for a device B serves: refused at once, saying why.
  const router = new NatsCommandRouter({
    nc: a,
    clusterName: "o",
    registry: {
      instanceId: "i-a",
      get: () => undefined,
      ownerOf: async () => "i-b",
    } as unknown as ConstructorParameters<typeof NatsCommandRouter>[0]["registry"],
    timeoutMs: 30_000,
    onError: () => {},
  });
  const started = performance.now();
  await assert.rejects(
    router.send(
      { projectId: "prj_1", deviceId: "dev_a" },
      { kind: "command", type: "gpio_read", args: { pin: 1 }, source: "api" },
    ),
    (error: AppError) => {
      assert.equal(error.code, "device_offline");
      assert.match(
        error.message,
        /instance i-b.*the cluster's message bus \(NATS\) is unreachable from here/,
      );
      return true;
    },
  );
  assert.ok(performance.now() - started < 1_000, "refused at once, not after the 30 s timeout");

  // More than the outbox holds: the oldest are dropped, one warning line counts them.
  const extra = 5;
  for (let n = 2; n < 2 + outboxLimit + extra; n++) await state(n);
  const last = 1 + outboxLimit + extra;
  assert.equal(logA.lines.filter((l) => /more than 10000 events wait to be sent/.test(l)).length, 1);
  const arrived = delivered(last);
  proxy.restore();
  await arrived;
  assert.equal(heard.length, 1 + outboxLimit, "the first event and a full outbox");
  assert.deepEqual(heard.slice(0, 3), [1, 2 + extra, 3 + extra], "the oldest went, the rest in order");
  assert.ok(heard.every((n, i) => i <= 1 || n === (heard[i - 1] as number) + 1));
  await logA.line(
    new RegExp(`NATS: ${outboxLimit} event\\(s\\) published while unreachable sent; ${extra} older`),
  );
  assert.equal(reconnects, 1);
  assert.equal(linkA.connected, true);
});

test("NATS_URL: an IPv6 address works", { skip: noNatsServer }, async (t) => {
  const port = await freePort("::1").catch(() => null);
  if (port === null) return t.skip("no IPv6 loopback here");
  await natsServer(t, port, "::1");
  const config = loadConfig(
    {
      NATS_URL: `nats://[::1]:${port}`,
      DATABASE_URL: "postgres://unused",
      CLUSTER_NAME: "v6",
      INSTANCE_ID: "i-a",
    },
    "/",
  ).cluster as ClusterConfig;
  const log = logCollector();
  const nc = await connectNats(config, log.log);
  t.after(() => nc.close());
  await nc.flush();
  assert.match(log.lines.join("\n"), new RegExp(`connected to NATS at \\[::1\\]:${port}`));
});
