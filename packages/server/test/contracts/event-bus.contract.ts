import assert from "node:assert/strict";
import { type TestContext, test } from "node:test";
import type { DeviceEvent, EventBus } from "../../src/events/bus.ts";
import { acrossInstances } from "./instances.ts";

/** The buses under test: one per instance ([one] for one process, [A, B] for a cluster). */
export interface BusFixture {
  buses: EventBus[];
  /** Every subscriber error the buses reported. */
  errors: unknown[];
  /** Resolves once what was published and subscribed so far has reached every instance. */
  settle(): Promise<void>;
}

export type BusFactory = (t: TestContext) => Promise<BusFixture | null>;

const at = 1_700_000_000_000;
const log = (projectId: string, deviceId: string, n: number) =>
  ({
    projectId,
    deviceId,
    entry: {
      id: `log_${n}`,
      at: new Date(at + n).toISOString(),
      level: "info",
      source: "device",
      message: `line ${n}`,
    },
  }) as const;
const state = (projectId: string, deviceId: string, n: number) => ({
  projectId,
  deviceId,
  at: at + n,
  entityId: "temp",
  value: n,
});
const summary = (e: DeviceEvent) =>
  `${e.type} ${e.payload.deviceId} ${e.type === "device.log" ? e.payload.entry.message : e.type === "device.state" ? e.payload.value : ""}`.trim();

/**
 * The EventBus contract (events/bus.ts), run against each implementation as Hono runs one router
 * suite against every router. The tests that need a second instance are skipped for one process.
 */
export function eventBusContract(name: string, create: BusFactory, options: { instances: 1 | 2 }): void {
  const across = acrossInstances(options);
  const fixture = async (t: TestContext) => {
    const f = await create(t);
    return f;
  };

  test(`${name} bus: a type's subscribers hear its events; publish settles once async subscribers are done`, async (t) => {
    const f = await fixture(t);
    if (!f) return;
    const [bus] = f.buses as [EventBus];
    const heard: string[] = [];
    bus.subscribe("project.renamed", async (e) => {
      await new Promise((r) => setImmediate(r));
      heard.push(e.name);
    });
    bus.subscribe("project.created", (e) => void heard.push(`created ${e.name}`));
    await bus.publish("project.renamed", { projectId: "prj_1", actorId: "usr_1", name: "Greenhouse" });
    assert.deepEqual(heard, ["Greenhouse"]);
  });

  test(`${name} bus: device and project subscriptions hear their own devices' events, in publish order`, async (t) => {
    const f = await fixture(t);
    if (!f) return;
    const [bus] = f.buses as [EventBus];
    const device: string[] = [];
    const project: string[] = [];
    bus.subscribeDevice("dev_a", (e) => void device.push(summary(e)));
    bus.subscribeProject("prj_1", (e) => void project.push(summary(e)));
    await bus.publish("device.log", log("prj_1", "dev_a", 1));
    await bus.publish("device.state", state("prj_1", "dev_b", 2));
    await bus.publish("device.state", state("prj_2", "dev_c", 3));
    await bus.publish("device.state", state("prj_1", "dev_a", 4));
    await bus.publish("project.renamed", { projectId: "prj_1", actorId: "usr_1", name: "no device" });
    assert.deepEqual(device, ["device.log dev_a line 1", "device.state dev_a 4"]);
    assert.deepEqual(project, ["device.log dev_a line 1", "device.state dev_b 2", "device.state dev_a 4"]);
  });

  test(`${name} bus: after unsubscribing, nothing more arrives`, async (t) => {
    const f = await fixture(t);
    if (!f) return;
    const [bus] = f.buses as [EventBus];
    let count = 0;
    const offType = bus.subscribe("device.state", () => void count++);
    const offDevice = bus.subscribeDevice("dev_a", () => void count++);
    const offProject = bus.subscribeProject("prj_1", () => void count++);
    await bus.publish("device.state", state("prj_1", "dev_a", 1));
    assert.equal(count, 3);
    offType();
    offDevice();
    offProject();
    offProject(); // twice is harmless
    await bus.publish("device.state", state("prj_1", "dev_a", 2));
    assert.equal(count, 3);
  });

  test(`${name} bus: a subscriber that throws or rejects is reported; the others and the publisher carry on`, async (t) => {
    const f = await fixture(t);
    if (!f) return;
    const [bus] = f.buses as [EventBus];
    const heard: string[] = [];
    bus.subscribe("device.state", () => {
      throw new Error("boom");
    });
    bus.subscribe("device.state", async () => {
      throw new Error("async boom");
    });
    bus.subscribe("device.state", () => void heard.push("type"));
    bus.subscribeDevice("dev_a", () => {
      throw new Error("device boom");
    });
    bus.subscribeDevice("dev_a", () => void heard.push("device"));
    await bus.publish("device.state", state("prj_1", "dev_a", 1));
    assert.deepEqual(heard, ["type", "device"]);
    assert.deepEqual(f.errors.map((e) => (e as Error).message).sort(), ["async boom", "boom", "device boom"]);
  });

  across(
    `${name} bus: a watcher on another instance hears one device's events in publish order`,
    async (t) => {
      const f = await fixture(t);
      if (!f) return;
      const [a, b] = f.buses as [EventBus, EventBus];
      const device: string[] = [];
      const project: string[] = [];
      b.subscribeDevice("dev_a", (e) => void device.push(summary(e)));
      b.subscribeProject("prj_1", (e) => void project.push(summary(e)));
      await f.settle();
      const expected: string[] = [];
      for (let n = 0; n < 200; n++) {
        if (n % 2) await a.publish("device.state", state("prj_1", "dev_a", n));
        else await a.publish("device.log", log("prj_1", "dev_a", n));
        expected.push(n % 2 ? `device.state dev_a ${n}` : `device.log dev_a line ${n}`);
      }
      await a.publish("device.connected", {
        projectId: "prj_1",
        deviceId: "dev_a",
        at,
        board: "pico_w",
        firmware: "1.0.0",
      });
      expected.push("device.connected dev_a");
      await f.settle();
      assert.deepEqual(device, expected);
      assert.deepEqual(project, expected);
    },
  );

  across(
    `${name} bus: other instances' events reach watch streams and everywhere subscribers, not local ones`,
    async (t) => {
      const f = await fixture(t);
      if (!f) return;
      const [a, b] = f.buses as [EventBus, EventBus];
      const heard: string[] = [];
      a.subscribe("env.changed", (e) => void heard.push(`A local ${e.name}`));
      a.subscribe("env.changed", (e) => void heard.push(`A everywhere ${e.name}`), { everywhere: true });
      b.subscribe("env.changed", (e) => void heard.push(`B local ${e.name}`));
      b.subscribe("env.changed", (e) => void heard.push(`B everywhere ${e.name}`), { everywhere: true });
      b.subscribe("env.changed", (e) => void heard.push(`B local false ${e.name}`), { everywhere: false });
      b.subscribe("project.renamed", () => void heard.push("B everywhere, another type"), {
        everywhere: true,
      });
      await f.settle();
      await a.publish("env.changed", { projectId: "prj_1", actorId: "usr_1", name: "FROM_A", change: "set" });
      await f.settle();
      await b.publish("env.changed", {
        projectId: "prj_1",
        actorId: "usr_1",
        name: "FROM_B",
        change: "unset",
      });
      await f.settle();
      assert.deepEqual(heard, [
        "A local FROM_A",
        "A everywhere FROM_A",
        "B everywhere FROM_A",
        "B local FROM_B",
        "B everywhere FROM_B",
        "B local false FROM_B",
        "A everywhere FROM_B",
      ]);
    },
  );

  across(
    `${name} bus: across instances, each watch stream hears its own device or project only`,
    async (t) => {
      const f = await fixture(t);
      if (!f) return;
      const [a, b] = f.buses as [EventBus, EventBus];
      const heard: string[] = [];
      b.subscribeDevice("dev_b", (e) => void heard.push(`dev_b: ${summary(e)}`));
      b.subscribeProject("prj_2", (e) => void heard.push(`prj_2: ${summary(e)}`));
      await f.settle();
      await a.publish("device.state", state("prj_1", "dev_a", 1));
      await a.publish("device.state", state("prj_1", "dev_b", 2));
      await a.publish("device.state", state("prj_2", "dev_c", 3));
      await a.publish("project.renamed", { projectId: "prj_2", actorId: "usr_1", name: "no device" });
      await a.publish("project.deleted", { projectId: "prj_2", actorId: "usr_1" });
      await f.settle();
      assert.deepEqual(heard, ["dev_b: device.state dev_b 2", "prj_2: device.state dev_c 3"]);
    },
  );

  across(
    `${name} bus: across instances, unsubscribing stops remote delivery; other handlers keep theirs`,
    async (t) => {
      const f = await fixture(t);
      if (!f) return;
      const [a, b] = f.buses as [EventBus, EventBus];
      const heard: string[] = [];
      const off1 = b.subscribeDevice("dev_a", (e) => void heard.push(`one ${summary(e)}`));
      const off2 = b.subscribeDevice("dev_a", (e) => void heard.push(`two ${summary(e)}`));
      const offType = b.subscribe("device.state", (e) => void heard.push(`type ${e.value}`), {
        everywhere: true,
      });
      await f.settle();
      await a.publish("device.state", state("prj_1", "dev_a", 1));
      await f.settle();
      off1();
      offType();
      await a.publish("device.state", state("prj_1", "dev_a", 2));
      await f.settle();
      off2();
      await a.publish("device.state", state("prj_1", "dev_a", 3));
      await f.settle();
      assert.deepEqual(heard, [
        "one device.state dev_a 1",
        "two device.state dev_a 1",
        "type 1",
        "two device.state dev_a 2",
      ]);
    },
  );

  across(
    `${name} bus: across instances, a failing subscriber is reported and the others still hear the event`,
    async (t) => {
      const f = await fixture(t);
      if (!f) return;
      const [a, b] = f.buses as [EventBus, EventBus];
      const heard: string[] = [];
      b.subscribeDevice("dev_a", () => {
        throw new Error("remote boom");
      });
      b.subscribeDevice("dev_a", async () => {
        throw new Error("remote async boom");
      });
      b.subscribeDevice("dev_a", (e) => void heard.push(summary(e)));
      await f.settle();
      await a.publish("device.state", state("prj_1", "dev_a", 1));
      await a.publish("device.state", state("prj_1", "dev_a", 2));
      await f.settle();
      assert.deepEqual(heard, ["device.state dev_a 1", "device.state dev_a 2"]);
      assert.deepEqual(f.errors.map((e) => (e as Error).message).sort(), [
        "remote async boom",
        "remote async boom",
        "remote boom",
        "remote boom",
      ]);
    },
  );
}
