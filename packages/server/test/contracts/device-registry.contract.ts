import assert from "node:assert/strict";
import { type TestContext, test } from "node:test";
import type { DeviceConnection, DeviceRegistry } from "../../src/link/registry.ts";
import { acrossInstances } from "./instances.ts";

/** The registries under test: one per instance ([one] for one process, [A, B] for a cluster). */
export interface RegistryFixture {
  registries: DeviceRegistry[];
  /** A device that exists (in the database, where the implementation keeps ownership there). */
  device(): Promise<{ projectId: string; deviceId: string }>;
  /** What the device link writes when an instance starts serving a device: its presence row. */
  online(deviceId: string, instanceId: string): Promise<void>;
  /** …and when the device's connection closes. */
  offline(deviceId: string): Promise<void>;
  /** Resolves once what was sent so far between instances has arrived. */
  settle(): Promise<void>;
}

export type RegistryFactory = (t: TestContext) => Promise<RegistryFixture | null>;

/**
 * A stand-in for a device socket: what it was told, nothing more. `generation`: its place among the
 * device's connections (a cluster's; taken when it authenticated).
 */
export function fakeConnection(device: { projectId: string; deviceId: string }, generation?: number) {
  const closed: { code: number; reason: string }[] = [];
  const connection: DeviceConnection & { closed: typeof closed } = {
    ...device,
    ...(generation === undefined ? {} : { generation }),
    board: "pico_w",
    maxFrame: 65_536,
    firmware: "1.0.0",
    closed,
    send: () => {},
    close: (code, reason) => void closed.push({ code, reason }),
    command: async () => ({}),
  };
  return connection;
}

/** The DeviceRegistry contract (link/registry.ts), run against each implementation. */
export function deviceRegistryContract(
  name: string,
  create: RegistryFactory,
  options: { instances: 1 | 2 },
): void {
  const across = acrossInstances(options);
  const fixture = create;

  test(`${name} registry: register, replace on the same instance, unregister`, async (t) => {
    const f = await fixture(t);
    if (!f) return;
    const [registry] = f.registries as [DeviceRegistry];
    const device = await f.device();
    const first = fakeConnection(device);
    assert.equal(registry.register(first), undefined);
    assert.equal(registry.register(first), undefined, "the same connection again replaces nothing");
    assert.equal(registry.get(device.deviceId), first);
    const second = fakeConnection(device);
    assert.equal(registry.register(second), first, "the replaced connection is handed back (to close it)");
    assert.equal(registry.unregister(first), false, "the replaced one no longer unregisters the device");
    assert.equal(registry.get(device.deviceId), second);
    assert.equal(registry.count(), 1);
    assert.deepEqual([...registry.all()], [second]);
    assert.equal(registry.unregister(second), true);
    assert.equal(registry.get(device.deviceId), undefined);
    assert.equal(registry.count(), 0);
  });

  test(`${name} registry: ownerOf names this instance for its own devices, none for the others`, async (t) => {
    const f = await fixture(t);
    if (!f) return;
    const [registry] = f.registries as [DeviceRegistry];
    const device = await f.device();
    const idle = await f.device();
    const connection = fakeConnection(device);
    registry.register(connection);
    await f.online(device.deviceId, registry.instanceId);
    assert.equal(typeof registry.instanceId, "string");
    assert.equal(await registry.ownerOf(device.deviceId), registry.instanceId);
    assert.equal(await registry.ownerOf(idle.deviceId), null);
    registry.unregister(connection);
    await f.offline(device.deviceId);
    assert.equal(await registry.ownerOf(device.deviceId), null);
  });

  across(
    `${name} registry: a device served by another instance is owned there, not connected here`,
    async (t) => {
      const f = await fixture(t);
      if (!f) return;
      const [a, b] = f.registries as [DeviceRegistry, DeviceRegistry];
      assert.notEqual(a.instanceId, b.instanceId);
      const device = await f.device();
      a.register(fakeConnection(device));
      await f.online(device.deviceId, a.instanceId);
      await f.settle();
      assert.equal(await b.ownerOf(device.deviceId), a.instanceId);
      assert.equal(await a.ownerOf(device.deviceId), a.instanceId);
      assert.equal(b.get(device.deviceId), undefined);
      assert.equal(b.count(), 0);
    },
  );

  across(
    `${name} registry: a reconnect to another instance takes the device over; the old one lets it go`,
    async (t) => {
      const f = await fixture(t);
      if (!f) return;
      const [a, b] = f.registries as [DeviceRegistry, DeviceRegistry];
      const device = await f.device();
      const other = await f.device();
      const released: string[] = [];
      a.onReleased((c) => void released.push(`A ${c.deviceId}`));
      const offB = b.onReleased((c) => void released.push(`B ${c.deviceId}`));
      const onA = fakeConnection(device, 1);
      const stays = fakeConnection(other, 1);
      a.register(onA);
      a.register(stays);
      await f.online(device.deviceId, a.instanceId);
      a.claim(onA);
      a.claim(stays);
      await f.settle();
      const onB = fakeConnection(device, 2);
      assert.equal(b.register(onB), undefined, "nothing to replace on B itself");
      await f.settle();
      assert.deepEqual(released, [], "registered on B, not yet holding the device: A keeps it");
      await f.online(device.deviceId, b.instanceId);
      b.claim(onB);
      await f.settle();
      assert.deepEqual(released, [`A ${device.deviceId}`]);
      assert.equal(a.get(device.deviceId), undefined);
      assert.equal(a.unregister(onA), false, "A's socket closing later must not take the device offline");
      assert.deepEqual([...a.all()], [stays], "A's other devices stay");
      assert.equal(await a.ownerOf(device.deviceId), b.instanceId);
      assert.equal(await b.ownerOf(device.deviceId), b.instanceId);
      // Back to A: B lets go, unless nobody listens there any more.
      offB();
      const again = fakeConnection(device, 3);
      a.register(again);
      a.claim(again);
      await f.settle();
      assert.equal(b.get(device.deviceId), undefined);
      assert.deepEqual(released, [`A ${device.deviceId}`]);
    },
  );

  across(
    `${name} registry: a stale claim (an older connection's, arriving late) does not release a newer registration`,
    async (t) => {
      const f = await fixture(t);
      if (!f) return;
      const [a, b] = f.registries as [DeviceRegistry, DeviceRegistry];
      const device = await f.device();
      const released: string[] = [];
      a.onReleased((c) => void released.push(`A ${c.deviceId}`));
      b.onReleased((c) => void released.push(`B ${c.deviceId}`));
      // The board's newest connection is on A (generation 2)...
      const newer = fakeConnection(device, 2);
      a.register(newer);
      await f.online(device.deviceId, a.instanceId);
      a.claim(newer);
      // ...and an older one (generation 1, its hello slow) registers on B and claims after it.
      const older = fakeConnection(device, 1);
      b.register(older);
      b.claim(older);
      await f.settle();
      assert.deepEqual(
        released,
        [`B ${device.deviceId}`],
        "B lets its older connection go; A keeps the newer",
      );
      assert.equal(a.get(device.deviceId), newer);
      assert.deepEqual(newer.closed, []);
      assert.equal(await b.ownerOf(device.deviceId), a.instanceId);
    },
  );
}
