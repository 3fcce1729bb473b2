import assert from "node:assert/strict";
import { test } from "node:test";
import { type DeviceEvent, InProcessEventBus } from "../src/events/bus.ts";

function bus() {
  const errors: unknown[] = [];
  return { bus: new InProcessEventBus((error) => errors.push(error)), errors };
}

const log = (deviceId: string, message: string) => ({
  projectId: "prj_1",
  deviceId,
  entry: {
    id: `log_${message}`,
    at: "2026-01-01T00:00:00.000Z",
    level: "info" as const,
    source: "device" as const,
    message,
  },
});

test("bus: a subscriber hears the events of its type, with their payload, and no other type", async () => {
  const { bus: b, errors } = bus();
  const heard: string[] = [];
  b.subscribe("project.created", (e) => void heard.push(`created ${e.name}`));
  b.subscribe("project.renamed", (e) => void heard.push(`renamed ${e.name}`));
  await b.publish("project.created", { actorId: "usr_1", projectId: "prj_1", name: "a" });
  await b.publish("project.renamed", { actorId: "usr_1", projectId: "prj_1", name: "b" });
  await b.publish("project.deleted", { actorId: "usr_1", projectId: "prj_1" });
  assert.deepEqual(heard, ["created a", "renamed b"]);
  assert.deepEqual(errors, []);
});

test("bus: a subscriber that throws is reported and neither the publisher nor the others notice", async () => {
  const { bus: b, errors } = bus();
  const heard: string[] = [];
  const boom = new Error("boom");
  b.subscribe("env.changed", () => void heard.push("first"));
  b.subscribe("env.changed", () => {
    throw boom;
  });
  b.subscribe("env.changed", () => void heard.push("third"));
  b.subscribeDevice("dev_1", () => {
    throw boom;
  });
  b.subscribeDevice("dev_1", (e) => void heard.push(`device ${e.type}`));
  await b.publish("env.changed", { actorId: "usr_1", projectId: "prj_1", name: "K", change: "set" });
  await b.publish("device.log", log("dev_1", "x"));
  assert.deepEqual(heard, ["first", "third", "device device.log"]);
  assert.deepEqual(errors, [boom, boom]);
});

test("bus: publish waits for async subscribers, and a rejection is reported, never thrown", async () => {
  const { bus: b, errors } = bus();
  const done: string[] = [];
  const nope = new Error("nope");
  b.subscribe("token.created", async () => {
    await new Promise((resolve) => setImmediate(resolve));
    done.push("slow");
  });
  b.subscribe("token.created", async () => {
    await new Promise((resolve) => setImmediate(resolve));
    throw nope;
  });
  b.subscribeDevice("dev_1", async () => {
    throw nope;
  });
  b.subscribe("token.created", () => void done.push("sync"));
  const published = b.publish("token.created", { actorId: "usr_1", tokenId: "tok_1", name: "CLI" });
  assert.deepEqual(done, ["sync"], "sync subscribers run during publish");
  await published; // resolves although a subscriber rejected
  assert.deepEqual(done, ["sync", "slow"], "settles once the async subscribers are done");
  assert.deepEqual(errors, [nope]);
  await b.publish("device.log", log("dev_1", "y"));
  assert.deepEqual(errors, [nope, nope], "a per-device subscriber's rejection is reported too");
});

test("bus: unsubscribing stops delivery, also from inside a handler during a publish", async () => {
  const { bus: b } = bus();
  const heard: string[] = [];
  const offA = b.subscribe("device.state", () => {
    heard.push("a");
    offA();
    offB(); // the others of this publish still hear it; later publishes do not
  });
  const offB = b.subscribe("device.state", () => void heard.push("b"));
  const offDevice = b.subscribeDevice("dev_1", () => void heard.push("device"));
  const state = { projectId: "prj_1", deviceId: "dev_1", at: 1, entityId: "t", value: 1 };
  await b.publish("device.state", state);
  offDevice();
  offDevice(); // twice is harmless
  await b.publish("device.state", state);
  assert.deepEqual(heard, ["a", "b", "device"]);
});

test("bus: a device subscription hears every event naming its device, and only those", async () => {
  const { bus: b } = bus();
  const one: DeviceEvent[] = [];
  const two: DeviceEvent[] = [];
  b.subscribeDevice("dev_1", (e) => void one.push(e));
  b.subscribeDevice("dev_2", (e) => void two.push(e));
  await b.publish("device.log", log("dev_1", "hi"));
  await b.publish("device.connected", {
    projectId: "prj_1",
    deviceId: "dev_2",
    at: 5,
    board: "pico_w",
    firmware: "1",
  });
  await b.publish("device.deleted", {
    actorId: "usr_1",
    projectId: "prj_1",
    deviceId: "dev_1",
    cause: "project",
  });
  await b.publish("project.deleted", { actorId: "usr_1", projectId: "prj_1" });
  assert.deepEqual(
    one.map((e) => e.type),
    ["device.log", "device.deleted"],
  );
  assert.deepEqual(one[0], { type: "device.log", payload: log("dev_1", "hi") });
  assert.deepEqual(two, [
    {
      type: "device.connected",
      payload: { projectId: "prj_1", deviceId: "dev_2", at: 5, board: "pico_w", firmware: "1" },
    },
  ]);
});

test("bus: a project subscription hears every device event of the project, later devices included, and only those", async () => {
  const { bus: b } = bus();
  const heard: string[] = [];
  const off = b.subscribeProject("prj_1", (e) => void heard.push(`${e.type} ${e.payload.deviceId}`));
  await b.publish("device.created", {
    actorId: "usr_1",
    projectId: "prj_1",
    deviceId: "dev_new",
    name: "n",
    board: "pico_w",
  });
  await b.publish("device.log", log("dev_new", "hi"));
  await b.publish("device.log", { ...log("dev_other", "elsewhere"), projectId: "prj_2" });
  await b.publish("project.deleted", { actorId: "usr_1", projectId: "prj_1" });
  off();
  await b.publish("device.log", log("dev_new", "after"));
  assert.deepEqual(heard, ["device.created dev_new", "device.log dev_new"]);
});
