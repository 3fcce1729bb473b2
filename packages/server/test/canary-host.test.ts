import assert from "node:assert/strict";
import { test } from "node:test";
import type { Board } from "@sdk/protocol";
import type { RemoteSandbox } from "../src/scripts/pool.ts";
import { type CanaryState, canaryOperations, roomIn } from "../src/services/script-canary.ts";

/** A sandbox whose `sync` and room the test settles by hand: the operations' awaits become steps. */
class FakeSandbox {
  readonly worker = {};
  readonly attached = new Set<string>();
  disposed = false;
  fault: string | null = null;
  pendingSyncs: (() => void)[] = [];
  room: { promise: Promise<void>; resolve: () => void } | null = null;
  get devices() {
    return [...this.attached];
  }
  attach(deviceId: string) {
    if (!this.disposed) this.attached.add(deviceId);
  }
  detach(deviceId: string) {
    this.attached.delete(deviceId);
  }
  dispose() {
    this.disposed = true;
    this.attached.clear();
  }
  sync(): Promise<string | null> {
    return new Promise((resolve) => this.pendingSyncs.push(() => resolve(this.fault)));
  }
  waitForRoom(): Promise<void> | null {
    return this.room?.promise ?? null;
  }
  /** Resolves once the operation waits on a sync of this sandbox. */
  async syncRequested() {
    while (this.pendingSyncs.length === 0) await new Promise((resolve) => setImmediate(resolve));
  }
  /** Settles the oldest sync once the operation waits on it. */
  async settleSync() {
    await this.syncRequested();
    this.pendingSyncs.shift()!();
  }
}

/** A host context with one project: its connected devices, a stable sandbox, loads the test settles. */
function host() {
  const p: CanaryState & { restarts: number[] } = { restarts: [] };
  const devices = new Map<string, Board>([
    ["m1", "pico_w"],
    ["m2", "pico_w"],
    ["s1", "pico_w"],
  ]);
  const stable = new FakeSandbox();
  for (const id of ["m1", "m2", "s1"]) stable.attach(id);
  p.running = { deploymentId: "dep_1", sandbox: stable as unknown as RemoteSandbox };
  const loads: ((s: FakeSandbox) => void)[] = [];
  const loaded: FakeSandbox[] = [];
  let queue: Promise<unknown> = Promise.resolve();
  let deleted = false;
  /** What ran when the host was asked to start the live deployment (null: nothing running then). */
  const starts: (string | null)[] = [];
  const ops = canaryOperations({
    project: () => p,
    existing: () => (deleted ? undefined : p),
    connected: () => devices,
    load: () =>
      new Promise((resolve) =>
        loads.push((s) => {
          loaded.push(s);
          resolve(s as unknown as RemoteSandbox);
        }),
      ),
    holdingWhile: (_projectId, fn) => {
      const run = queue.then(fn);
      queue = run.catch(() => {});
      return run;
    },
    attachAll: (_projectId, sandbox) => {
      for (const id of devices.keys()) if (!p.canary?.members.has(id)) sandbox.attach(id, "pico_w");
    },
    start: async () => void starts.push(p.running?.deploymentId ?? null),
    activeId: async () => p.running?.deploymentId ?? null,
    log: () => {},
    logAll: () => {},
    hooks: () => undefined,
    onError: (error) => assert.fail(String(error)),
    stopped: () => false,
  });
  /** Settles the next load with a fresh sandbox once the operation asked for it. */
  const settleLoad = async () => {
    while (loads.length === 0) await new Promise((resolve) => setImmediate(resolve));
    const s = new FakeSandbox();
    loads.shift()!(s);
    return s;
  };
  /** What the script host does when a device disconnects (the sandboxes it knows of detach it). */
  const disconnect = (deviceId: string) => {
    devices.delete(deviceId);
    p.running?.sandbox.detach(deviceId);
    p.canary?.sandbox.detach(deviceId);
  };
  return { p, ops, stable, settleLoad, disconnect, loaded, deleteProject: () => (deleted = true), starts };
}

test("a member that disconnects while the canary loads or starts keeps no instance in it", async () => {
  const h = host();
  const started = h.ops.startCanary("prj_1", "dep_2", new Set(["m1", "m2"]));
  const canary = await h.settleLoad();
  // The members leave the stable sandbox (it is on another worker: a sync), m1 disconnects meanwhile.
  await h.stable.syncRequested();
  h.disconnect("m1");
  await h.stable.settleSync();
  // m2 disconnects while the canary's instances start.
  await canary.syncRequested();
  assert.deepEqual(canary.devices, ["m2"]);
  h.disconnect("m2");
  await canary.settleSync();
  assert.equal(await started, "dep_1", "the stable deployment, read in the queue");
  assert.deepEqual(canary.devices, [], "no instance for a device that is gone");
  assert.equal(h.p.canary?.sandbox, canary as unknown as RemoteSandbox);
  assert.deepEqual(h.stable.devices, ["s1"]);
});

test("a device that disconnects while the canary is promoted keeps no instance in the live sandbox", async () => {
  const h = host();
  const started = h.ops.startCanary("prj_1", "dep_2", new Set(["m1"]));
  const canary = await h.settleLoad();
  await h.stable.settleSync();
  await canary.settleSync();
  await started;
  assert.deepEqual(canary.devices, ["m1"]);

  const promoted = h.ops.promoteCanary("prj_1", "dep_2", async () => {});
  // The stable sandbox's devices leave it (a sync); s1 disconnects meanwhile, and m1 too.
  await h.stable.syncRequested();
  h.disconnect("s1");
  h.disconnect("m1");
  await h.stable.settleSync();
  await promoted;
  assert.equal(h.p.running?.sandbox, canary as unknown as RemoteSandbox);
  assert.equal(h.p.canary, undefined);
  assert.deepEqual(
    canary.devices,
    ["m2"],
    "neither the stable device gone nor the member gone kept an instance",
  );
  assert.ok(h.stable.disposed);
});

test("promote and roll back act only on the canary they name", async () => {
  const h = host();
  const started = h.ops.startCanary("prj_1", "dep_2", new Set(["m1"]));
  const canary = await h.settleLoad();
  await h.stable.settleSync();
  await canary.settleSync();
  await started;
  await assert.rejects(
    h.ops.promoteCanary("prj_1", "dep_9", async () => assert.fail("no commit for another deployment")),
    /no such canary/,
  );
  await h.ops.rollBackCanary("prj_1", "dep_9");
  assert.equal(h.p.canary?.deploymentId, "dep_2", "another deployment's rollback leaves the canary alone");
  assert.ok(!canary.disposed);
});

test("back-pressure waits for the canary's sandbox too", async () => {
  const stable = new FakeSandbox();
  const canary = new FakeSandbox();
  const sandboxes = [stable, canary] as unknown as RemoteSandbox[];
  assert.equal(roomIn(sandboxes), null);
  let resolve!: () => void;
  canary.room = { promise: new Promise((r) => (resolve = r)), resolve: () => resolve() };
  const waiting = roomIn(sandboxes);
  assert.ok(waiting, "the canary's full sandbox makes the socket wait");
  let done = false;
  void waiting.then(() => (done = true));
  await new Promise((r) => setImmediate(r));
  assert.equal(done, false);
  canary.room.resolve();
  await waiting;
});

test("a project deleted while its canary starts gets no canary; the loaded sandbox is dropped", async () => {
  const h = host();
  const started = h.ops.startCanary("prj_1", "dep_2", new Set(["m1"]));
  const canary = await h.settleLoad();
  await h.stable.syncRequested();
  h.deleteProject();
  await h.stable.settleSync();
  await canary.settleSync();
  await assert.rejects(started, /the project was deleted/);
  assert.equal(h.p.canary, undefined);
  assert.ok(canary.disposed);
  assert.equal(h.ops.health("prj_1"), undefined, "read-only helpers do not bring the project back");
});

test("a canary that stops itself while its promotion commits is not left as a dead live sandbox: the live deployment starts again", async () => {
  const h = host();
  const started = h.ops.startCanary("prj_1", "dep_2", new Set(["m1"]));
  const canary = await h.settleLoad();
  await h.stable.settleSync();
  await canary.settleSync();
  await started;
  const promoted = h.ops.promoteCanary("prj_1", "dep_2", async () => {
    canary.fault = "memory cap";
    canary.dispose();
  });
  await h.stable.settleSync();
  await promoted;
  assert.equal(h.p.running, undefined, "the dead sandbox is not the running one");
  assert.deepEqual(h.starts, [null], "the live deployment (now the canary's) starts again");
  assert.ok(h.stable.disposed);
});
