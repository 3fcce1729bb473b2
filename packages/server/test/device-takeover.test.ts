import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { type TestContext, test } from "node:test";
import { deviceCloseCodes } from "@sdk/protocol";
import { deployScript as deploy, waitUntil } from "@sdk/test-helpers";
import { InProcessEventBus } from "../src/events/bus.ts";
import { systemClock } from "../src/lib/clock.ts";
import { SecretBox } from "../src/lib/secret-box.ts";
import { type DeviceConnection, type DeviceRegistry, LocalDeviceRegistry } from "../src/link/registry.ts";
import { createRepositories } from "../src/repositories/index.ts";
import { createServices } from "../src/services/index.ts";
import { scriptProject } from "./helpers/script-project.ts";
import { hello } from "./helpers/sockets.ts";

/**
 * A registry of instance `i-a` whose devices another instance can take over (`takenOver`), as a
 * cluster's registry tells when a device reconnects elsewhere. One process never does.
 */
class TakeoverRegistry implements DeviceRegistry {
  readonly instanceId = "i-a";
  // Ownership in memory (as one process keeps it): connections take no generation.
  readonly shared = false;
  readonly #here = new LocalDeviceRegistry();
  readonly #elsewhere = new Map<string, string>();
  readonly #released = new Set<(connection: DeviceConnection) => void>();

  register(connection: DeviceConnection) {
    this.#elsewhere.delete(connection.deviceId);
    return this.#here.register(connection);
  }
  claim(_connection: DeviceConnection) {}
  unregister(connection: DeviceConnection) {
    return this.#here.unregister(connection);
  }
  get(deviceId: string) {
    return this.#here.get(deviceId);
  }
  count() {
    return this.#here.count();
  }
  all() {
    return this.#here.all();
  }
  async ownerOf(deviceId: string) {
    return this.#here.get(deviceId) ? this.instanceId : (this.#elsewhere.get(deviceId) ?? null);
  }
  onReleased(handler: (connection: DeviceConnection) => void) {
    this.#released.add(handler);
    return () => void this.#released.delete(handler);
  }
  /** Instance `by` took the device over: the connection here is no longer registered. */
  takenOver(deviceId: string, by: string) {
    const connection = this.#here.get(deviceId);
    assert.ok(connection, "connected here");
    this.#here.unregister(connection);
    this.#elsewhere.set(deviceId, by);
    for (const handler of this.#released) handler(connection);
  }
}

/**
 * A project whose script logs its instance's start and end, one device, and instance i-a: services
 * of their own on the server's database, with the registry above, serving the device (connected).
 */
async function instanceWithDevice(t: TestContext) {
  const s = await scriptProject(t);
  await deploy(
    t,
    s.client,
    s.project.id,
    `import { DeviceScript } from "@sdk/device";
export default class Hello extends DeviceScript {
  onDeviceConnect() { console.log("script up"); }
  onDeviceDisconnect() { console.log("script down"); }
}`,
  );
  const { device, credentials, ids } = await s.addDevice();
  const registry = new TakeoverRegistry();
  const bus = new InProcessEventBus((error) => {
    throw error;
  });
  const errors: unknown[] = [];
  const services = createServices({
    config: s.server.config,
    database: s.server.database,
    box: new SecretBox(randomBytes(32)),
    clock: systemClock,
    version: "test",
    bus,
    registry,
    onError: (error) => errors.push(error),
    serverUrl: () => s.url,
  });
  services.deviceLink.start();
  services.scripts.start();
  t.after(() => services.scripts.stop());
  const disconnected: string[] = [];
  bus.subscribe("device.disconnected", (e) => void disconnected.push(e.deviceId));

  const socket: { closed?: { code: number; reason: string } } = {};
  const auth = await services.deviceLink.authenticate(device.id, credentials.secret);
  const session = services.deviceLink.open(auth, {
    send: () => {},
    close: (code, reason) => {
      socket.closed = { code, reason };
      void session.closed(code, reason);
    },
  });
  await session.receive(JSON.stringify(hello()));
  await waitUntil(async () => (await s.logs(device.id)).includes("script up"), 10_000, "the script instance");
  assert.equal((await s.client.api.getDevice({ params: ids })).status, "online");
  assert.equal(await services.deviceLink.isOnline(device.id), true);
  const repos = createRepositories(s.server.database.db, s.server.database.batcher);
  /** Instance i-b: the device said hello there (its presence write). */
  const helloOnB = () =>
    repos.devices.setPresence(device.id, { status: "online", lastSeenAt: Date.now(), instanceId: "i-b" });
  return { s, device, ids, registry, services, session, socket, errors, disconnected, helloOnB };
}

test("a device another instance took over: its socket here closes with 4000, its script instance ends, it stays online", async (t) => {
  const { s, device, ids, registry, services, socket, errors, disconnected, helloOnB } =
    await instanceWithDevice(t);
  // The device said hello to instance i-b, and i-a is told.
  await helloOnB();
  registry.takenOver(device.id, "i-b");

  assert.deepEqual(socket.closed, {
    code: deviceCloseCodes.replaced,
    reason: "replaced by a new connection on another server instance",
  });
  await waitUntil(
    async () => (await s.logs(device.id)).includes("script down"),
    10_000,
    "its instance ended",
  );
  await services.scripts.settled(s.project.id);
  assert.equal(services.scripts.runningDeployment(s.project.id), null, "no device left here: no sandbox");
  assert.equal(await services.deviceLink.drain(5_000), 0, "the closed session handled everything");
  const logs = await s.logs(device.id);
  assert.ok(
    logs.includes(
      "a new connection with the same credentials replaced the previous one (on another server instance)",
    ),
    logs.join("\n"),
  );
  assert.equal(
    logs.some((l) => l.startsWith("disconnected")),
    false,
  );
  assert.equal((await s.client.api.getDevice({ params: ids })).status, "online", "served by i-b");
  assert.deepEqual(disconnected, [], "no device.disconnected");
  assert.equal(services.deviceLink.connectedHere(device.id), false);
  assert.equal(await services.deviceLink.isOnline(device.id), true, "online on i-b");
  await assert.rejects(
    services.deviceLink.command({ ...ids }, "gpio_read", { pin: 2 }),
    (e: { code?: string }) => e.code === "device_offline",
    "not served here: the local router answers device_offline",
  );
  assert.deepEqual(errors, []);
});

test("a socket here that closes after another instance took the device over, before this one is told: it stays online, no one is told it went offline", async (t) => {
  const { s, device, ids, services, session, errors, disconnected, helloOnB } = await instanceWithDevice(t);
  await helloOnB();
  await session.closed(1006, "");
  assert.equal((await s.client.api.getDevice({ params: ids })).status, "online", "served by i-b");
  assert.deepEqual(disconnected, [], "no device.disconnected");
  await waitUntil(
    async () => (await s.logs(device.id)).includes("script down"),
    10_000,
    "its instance ended",
  );
  assert.deepEqual(errors, []);
  assert.equal(services.deviceLink.connectedHere(device.id), false);
});
