// The contract suites against the cluster's implementations: two instances on one NATS (a cluster
// name of their own per test) and one PostgreSQL schema per test.
import assert from "node:assert/strict";
import { once } from "node:events";
import net from "node:net";
import { type TestContext, test } from "node:test";
import { NatsCommandRouter } from "../src/cluster/command-router.ts";
import { NatsEventBus } from "../src/cluster/event-bus.ts";
import { connectCluster, DuplicateInstanceError } from "../src/cluster/index.ts";
import {
  connectNats,
  type NatsConnection,
  NatsLink,
  NatsUnreachableError,
  natsOptions,
} from "../src/cluster/nats.ts";
import { ClusterDeviceRegistry } from "../src/cluster/registry.ts";
import { clusterRepository } from "../src/cluster/repository.ts";
import { type ClusterConfig, loadConfig } from "../src/config.ts";
import { openDatabase } from "../src/db/database.ts";
import type { AppError } from "../src/errors.ts";
import { commandRouterContract } from "./contracts/command-router.contract.ts";
import { deviceRegistryContract, type RegistryFixture } from "./contracts/device-registry.contract.ts";
import { eventBusContract } from "./contracts/event-bus.contract.ts";
import { natsCluster, noNatsServer, ownNatsServer } from "./helpers/nats.ts";
import { postgresUrl } from "./helpers/postgres.ts";
import { tempDir } from "./helpers/server.ts";

const two = { instances: 2 } as const;
const quiet = { info: () => {}, warn: () => {}, error: () => {} };

function clusterConfig(natsUrl: string, name: string, instanceId: string): ClusterConfig {
  const config = loadConfig(
    { NATS_URL: natsUrl, DATABASE_URL: "postgres://unused", CLUSTER_NAME: name, INSTANCE_ID: instanceId },
    "/",
  );
  return config.cluster as ClusterConfig;
}

/** Two connections of one test cluster; `settle` round-trips both (what was sent has arrived). */
async function connections(t: TestContext, count: number) {
  const nats = await natsCluster(t);
  if (!nats) return null;
  const ncs: NatsConnection[] = [];
  t.after(() => Promise.all(ncs.map((nc) => nc.close())));
  for (let i = 0; i < count; i++)
    ncs.push(await connectNats(clusterConfig(nats.natsUrl, nats.clusterName, `i-${"ab"[i]}`), quiet));
  const settle = async () => {
    for (const nc of ncs) await nc.flush();
    for (const nc of ncs) await nc.flush();
  };
  return { ncs, settle, clusterName: nats.clusterName };
}

/** Two instances' registries on one database, with devices to own. */
async function registries(
  t: TestContext,
): Promise<(RegistryFixture & { ncs: NatsConnection[]; clusterName: string }) | null> {
  const databaseUrl = await postgresUrl(t);
  if (!databaseUrl) return null;
  const nats = await connections(t, 2);
  if (!nats) return null;
  const database = await openDatabase({ dataDir: tempDir(t), databaseUrl, writeQueueMaxRows: 1_000 });
  t.after(() => database.close());
  const { db } = database;
  const repo = clusterRepository(db);
  const now = Date.now();
  await db
    .insertInto("users")
    .values({
      id: "usr_1",
      email: "a@example.com",
      passwordHash: "x",
      role: "admin",
      createdAt: now,
      updatedAt: now,
    })
    .execute();
  await db
    .insertInto("projects")
    .values({ id: "prj_1", ownerId: "usr_1", name: "P", createdAt: now, updatedAt: now })
    .execute();
  const list = nats.ncs.map(
    (nc, i) =>
      new ClusterDeviceRegistry({
        nc,
        clusterName: nats.clusterName,
        instanceId: `i-${"ab"[i]}`,
        ownerOf: repo.ownerOf,
        onError: (e) => assert.fail(e as Error),
      }),
  );
  for (const registry of list) {
    registry.start();
    t.after(() => registry.stop());
  }
  let n = 0;
  return {
    ...nats,
    registries: list,
    device: async () => {
      const deviceId = `dev_${++n}`;
      await db
        .insertInto("devices")
        .values({
          id: deviceId,
          projectId: "prj_1",
          name: deviceId,
          board: "pico_w",
          secretHash: "x",
          lastSeenAt: null,
          firmwareVersion: null,
          createdAt: now,
          updatedAt: now,
        })
        .execute();
      return { projectId: "prj_1", deviceId };
    },
    online: async (deviceId, instanceId) => {
      await db
        .updateTable("devices")
        .set({ status: "online", instanceId })
        .where("id", "=", deviceId)
        .execute();
    },
    offline: async (deviceId) => {
      await db
        .updateTable("devices")
        .set({ status: "offline", instanceId: null })
        .where("id", "=", deviceId)
        .execute();
    },
  };
}

eventBusContract(
  "NATS",
  async (t) => {
    const nats = await connections(t, 2);
    if (!nats) return null;
    const errors: unknown[] = [];
    return {
      buses: nats.ncs.map((nc) => new NatsEventBus(nc, nats.clusterName, (e) => errors.push(e))),
      errors,
      settle: nats.settle,
    };
  },
  two,
);

deviceRegistryContract("NATS/PostgreSQL", registries, two);

commandRouterContract(
  "NATS/PostgreSQL",
  async (t) => {
    const f = await registries(t);
    if (!f) return null;
    const routers = f.ncs.map(
      (nc, i) =>
        new NatsCommandRouter({
          nc,
          clusterName: f.clusterName,
          registry: f.registries[i]!,
          timeoutMs: 300,
          onError: () => {},
        }),
    );
    t.after(() => {
      for (const router of routers) router.stop();
    });
    return { ...f, routers };
  },
  two,
);

test("NATS bus: a NATS subscription per subject while a handler wants it, dropped with the last one", async (t) => {
  const nats = await connections(t, 1);
  if (!nats) return;
  const bus = new NatsEventBus(nats.ncs[0]!, "c", () => {});
  const off1 = bus.subscribeDevice("dev_a", () => {});
  const off2 = bus.subscribeDevice("dev_a", () => {});
  const off3 = bus.subscribeProject("prj_1", () => {});
  const off4 = bus.subscribe("device.deleted", () => {}, { everywhere: true });
  const off5 = bus.subscribe("device.state", () => {});
  assert.deepEqual(bus.subjects, ["c.ev.*.*.*.dev_a", "c.ev.*.*.prj_1.*", "c.ev.device.deleted.>"]);
  off1();
  assert.deepEqual(bus.subjects, ["c.ev.*.*.*.dev_a", "c.ev.*.*.prj_1.*", "c.ev.device.deleted.>"]);
  off2();
  off3();
  off4();
  off5();
  assert.deepEqual(bus.subjects, []);
});

test("NATS_URL: credentials become options and never reach the server list; unreachable NATS is named, refused credentials too", async (t) => {
  const options = natsOptions(clusterConfig("nats://alice:s3cr%40t@nats-1:4333,tls://nats-2", "c", "i-a"));
  assert.deepEqual(options, {
    servers: ["nats-1:4333", "nats-2:4222"],
    user: "alice",
    pass: "s3cr@t",
    tls: {},
  });
  assert.deepEqual(natsOptions(clusterConfig("nats://tok3n@nats-1", "c", "i-a")), {
    servers: ["nats-1:4222"],
    token: "tok3n",
  });
  // A port nothing listens on: one just freed.
  const free = net.createServer().listen(0, "127.0.0.1");
  await once(free, "listening");
  const port = (free.address() as net.AddressInfo).port;
  free.close();
  await assert.rejects(
    connectNats(clusterConfig(`nats://bob:hunter2@127.0.0.1:${port}`, "c", "i-a"), quiet),
    (error: Error) => {
      assert.ok(error instanceof NatsUnreachableError);
      assert.match(
        error.message,
        new RegExp(`cannot connect to NATS at 127\\.0\\.0\\.1:${port} \\(NATS_URL\\)`),
      );
      assert.doesNotMatch(error.message, /hunter2/);
      return true;
    },
  );
  // A NATS that wants other credentials: the error says so, not "start NATS".
  if (!noNatsServer) {
    const guarded = net.createServer().listen(0, "127.0.0.1");
    await once(guarded, "listening");
    const guardedPort = (guarded.address() as net.AddressInfo).port;
    guarded.close();
    await ownNatsServer(t, guardedPort, "127.0.0.1", ["--user", "alice", "--pass", "right"]);
    await assert.rejects(
      connectNats(clusterConfig(`nats://alice:wrong@127.0.0.1:${guardedPort}`, "c", "i-a"), quiet),
      (error: Error) => {
        assert.match(error.message, /refused the credentials: check the user and password/);
        assert.doesNotMatch(error.message, /wrong/);
        return true;
      },
    );
  }
});

/** A router serving instance `id` on `nc` for any device, counting what it runs. */
function servingRouter(nc: NatsConnection, clusterName: string, id: string) {
  const ran: unknown[] = [];
  const router = new NatsCommandRouter({
    nc,
    clusterName,
    registry: {
      instanceId: id,
      get: () => undefined,
      ownerOf: async () => (id === "i-a" ? "i-b" : "i-a"),
    } as unknown as ConstructorParameters<typeof NatsCommandRouter>[0]["registry"],
    timeoutMs: 2_000,
    onError: () => {},
  });
  router.serve(async (_device, request) => {
    ran.push(request);
    return "done";
  });
  return { router, ran };
}

test("NATS router: a request that reaches its owner past its deadline answers device_timeout and is not run", async (t) => {
  const nats = await connections(t, 2);
  if (!nats) return;
  const [a, b] = nats.ncs as [NatsConnection, NatsConnection];
  const { router, ran } = servingRouter(b, nats.clusterName, "i-b");
  t.after(() => router.stop());
  await b.flush();
  const request = { kind: "command", type: "gpio_read", args: { pin: 1 }, source: "api" };
  const device = { projectId: "prj_1", deviceId: "dev_1" };
  const late = await a.request(
    `${nats.clusterName}.inst.i-b.route`,
    JSON.stringify({ device, request, deadline: Date.now() - 1 }),
    { timeout: 2_000 },
  );
  assert.equal(late.json<{ code: string }>().code, "device_timeout");
  assert.match(late.json<{ message: string }>().message, /after its sender stopped waiting; it was not run/);
  assert.deepEqual(ran, [], "the late request was not run");
  // In time: run.
  const sender = servingRouter(a, nats.clusterName, "i-a").router;
  t.after(() => sender.stop());
  assert.equal(await sender.send(device, request as never), "done");
  assert.equal(ran.length, 1);
});

test("NATS router: a request larger than NATS carries is refused with invalid_argument naming the limit", async (t) => {
  const nats = await connections(t, 2);
  if (!nats) return;
  const [a, b] = nats.ncs as [NatsConnection, NatsConnection];
  const { router: owner, ran } = servingRouter(b, nats.clusterName, "i-b");
  const { router: sender } = servingRouter(a, nats.clusterName, "i-a");
  t.after(() => {
    owner.stop();
    sender.stop();
  });
  const max = a.info?.max_payload ?? 0;
  assert.ok(max > 0);
  await assert.rejects(
    sender.send(
      { projectId: "prj_1", deviceId: "dev_1" },
      { kind: "message", message: { type: "blob", data: "x".repeat(max) } },
    ),
    (error: AppError) => {
      assert.equal(error.code, "invalid_argument");
      assert.match(error.message, new RegExp(`more than the ${max} bytes .*NATS max_payload`));
      return true;
    },
  );
  assert.deepEqual(ran, []);
});

test("NATS bus: an event larger than NATS carries reaches this instance's subscribers, with a log line", async (t) => {
  const nats = await natsCluster(t);
  if (!nats) return;
  const warnings: string[] = [];
  const nc = await connectNats(clusterConfig(nats.natsUrl, nats.clusterName, "i-a"), quiet);
  t.after(() => nc.close());
  NatsLink.of(nc, { ...quiet, warn: (m) => void warnings.push(m) });
  const bus = new NatsEventBus(nc, nats.clusterName, (e) => assert.fail(e as Error));
  const heard: unknown[] = [];
  bus.subscribe("device.message", (e) => void heard.push(e.message));
  const message = { type: "blob", data: "x".repeat(nc.info?.max_payload ?? 0) };
  await bus.publish("device.message", { projectId: "prj_1", deviceId: "dev_1", at: 1, message });
  assert.deepEqual(heard, [message]);
  assert.equal(warnings.length, 1);
  assert.match(warnings[0]!, /event device\.message not sent to the other instances: \d+ bytes is more than/);
});

test("NATS_URL: an IPv6 address is one server; no credentials in a refused NATS_URL's error", () => {
  assert.deepEqual(natsOptions(clusterConfig("nats://[::1]:4222", "c", "i-a")).servers, ["[::1]:4222"]);
  assert.equal(clusterConfig("nats://u:pw@[::1]", "c", "i-a").natsServer, "[::1]:4222");
  for (const url of [
    "http://bob:hunter2@nats-1:4222",
    "nats://bob:hunter2@[nats-1",
    "nats://hunter2@:4222/x",
  ])
    assert.throws(
      () => clusterConfig(url, "c", "i-a"),
      (error: Error) => {
        assert.match(error.message, /NATS_URL must be nats:\/\/ or tls:\/\/ URLs/);
        assert.doesNotMatch(error.message, /hunter2|bob/);
        return true;
      },
    );
});

test("cluster: an instance refuses to start while another live instance has its INSTANCE_ID", async (t) => {
  const nats = await natsCluster(t);
  if (!nats) return;
  const config = clusterConfig(nats.natsUrl, nats.clusterName, "i-same");
  const deps = { db: {} as never, log: quiet, onError: () => {}, commandTimeoutSeconds: 5 };
  const first = await connectCluster(config, deps);
  t.after(() => first.close());
  await assert.rejects(connectCluster(config, deps), (error: Error) => {
    assert.ok(error instanceof DuplicateInstanceError);
    assert.match(error.message, /another live instance of cluster \S+ has INSTANCE_ID i-same/);
    return true;
  });
  // Once it is gone, the id is free again.
  await first.close();
  const second = await connectCluster(config, deps);
  await second.close();
});
