// The contract suites against the cluster's implementations: two instances on one NATS (a cluster
// name of their own per test) and one PostgreSQL schema per test.
import assert from "node:assert/strict";
import { once } from "node:events";
import net from "node:net";
import { type TestContext, test } from "node:test";
import { NatsCommandRouter } from "../src/cluster/command-router.ts";
import { NatsEventBus } from "../src/cluster/event-bus.ts";
import { connectNats, type NatsConnection, NatsUnreachableError, natsOptions } from "../src/cluster/nats.ts";
import { ClusterDeviceRegistry } from "../src/cluster/registry.ts";
import { clusterRepository } from "../src/cluster/repository.ts";
import { type ClusterConfig, loadConfig } from "../src/config.ts";
import { openDatabase } from "../src/db/database.ts";
import { commandRouterContract } from "./contracts/command-router.contract.ts";
import { deviceRegistryContract, type RegistryFixture } from "./contracts/device-registry.contract.ts";
import { eventBusContract } from "./contracts/event-bus.contract.ts";
import { natsCluster } from "./helpers/nats.ts";
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

test("NATS_URL: credentials become options and never reach the server list; unreachable NATS is named", async () => {
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
});
