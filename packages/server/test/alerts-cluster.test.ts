// The alert monitor in a cluster: two monitors (two instances) on one database, their buses
// joined by the contract's delivery rule (helpers/cluster-buses.ts). Events are published once, on
// one instance; a device may go offline on one and come back on the other.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { test } from "node:test";
import { waitUntil } from "@sdk/test-helpers";
import type { EventBus } from "../src/events/bus.ts";
import { SecretBox } from "../src/lib/secret-box.ts";
import { AlertMonitor } from "../src/services/alert-monitor.ts";
import { type Alert, type AlertsService, alertsService } from "../src/services/alerts.ts";
import type { Principal } from "../src/services/auth.ts";
import { receiver } from "./helpers/alerts.ts";
import { TestClock } from "./helpers/clock.ts";
import { clusterBuses } from "./helpers/cluster-buses.ts";
import { type Ctx, repositorySuites } from "./helpers/repository-suite.ts";

const minute = 60_000;

async function twoInstances(c: Ctx, options: { rule?: boolean } = {}) {
  const clock = new TestClock();
  const { buses, delivered } = clusterBuses(2);
  const user = await c.user();
  const project = await c.project(user.id);
  const device = await c.device(project.id, { lastSeenAt: clock.now() });
  const presence = (status: "online" | "offline") =>
    c.database.db.updateTable("devices").set({ status }).where("id", "=", device.id).execute();
  await presence("online");
  if (options.rule !== false)
    await c.repos.alerts.insertRule({
      id: "rule_1",
      projectId: project.id,
      kind: "device_offline",
      minutes: 5,
      count: null,
      windowMinutes: null,
      createdAt: clock.now(),
    });
  const raised: { type: Alert["type"]; by: string }[] = [];
  /** Which instance the device is connected to, if any. */
  let servedBy: "A" | "B" | null = "A";
  const ticks = { A: 0, B: 0 };
  const monitors = (["A", "B"] as const).map((name, i) => {
    const alerts = {
      openEpisodes: () => c.repos.alerts.openEpisodes(),
      offlineWatched: () => c.repos.alerts.offlineWatched(),
      rulesOf: (projectId: string) => c.repos.alerts.rulesOf(projectId),
      rulesVersion: () => 0,
      raise: async (alert: Alert) => {
        raised.push({ type: alert.type, by: name });
        return [];
      },
      attempt: async () => {},
      deliverDue: async () => {
        ticks[name]++;
      },
      stop: async () => {},
      openEpisode: (ruleId: string, subject: string) =>
        c.repos.alerts.openEpisode(ruleId, subject, clock.now()),
      closeEpisode: (ruleId: string, subject: string) => c.repos.alerts.closeEpisode(ruleId, subject),
    } as unknown as AlertsService;
    return new AlertMonitor({
      alerts,
      repos: c.repos,
      bus: buses[i]!,
      clock,
      onError: (error) => assert.fail(error as Error),
      isOnline: () => servedBy === name,
      shared: true,
      tickMs: 5,
    });
  });
  for (const m of monitors) m.start();
  const [a, b] = buses as [EventBus, EventBus];
  const bus = { A: a, B: b };
  const ids = { projectId: project.id, deviceId: device.id };
  // Ticks wait for the monitors' load: started, both know nothing is offline.
  await waitUntil(() => ticks.A > 0 && ticks.B > 0, 5_000, "the monitors' first ticks");
  return {
    clock,
    raised,
    ids,
    monitors,
    /** Two whole ticks of each running monitor from now. */
    async ticked(names: ("A" | "B")[] = ["A", "B"]) {
      const from = { ...ticks };
      await waitUntil(() => names.every((n) => ticks[n] >= from[n] + 2), 5_000, "two ticks");
    },
    async disconnect(on: "A" | "B") {
      servedBy = null;
      await presence("offline");
      await bus[on].publish("device.disconnected", { ...ids, at: clock.now(), reason: "closed" });
      await delivered();
    },
    /** `heard: false`: the other instance misses the event (the database says online all the same). */
    async connect(on: "A" | "B", heard = true) {
      servedBy = on;
      await presence("online");
      if (!heard) return;
      await bus[on].publish("device.connected", {
        ...ids,
        at: clock.now(),
        board: "pico_w",
        firmware: "1.0.0",
      });
      await delivered();
    },
  };
}

repositorySuites("alerts in a cluster", ({ setup }) => {
  test("a device that went offline on A and came back on B raises nothing, heard or not", async (t) => {
    const c = await setup(t);
    if (!c) return;
    const s = await twoInstances(c);
    t.after(() => Promise.all(s.monitors.map((m) => m.stop())));
    await s.disconnect("A");
    await s.connect("B");
    s.clock.advance(6 * minute);
    await s.ticked();
    assert.deepEqual(s.raised, [], "A heard B's device.connected");

    await s.disconnect("B");
    await s.connect("A", false);
    s.clock.advance(6 * minute);
    await s.ticked();
    assert.deepEqual(s.raised, [], "B read the device's presence before raising");
  });

  test("device.offline is raised once, and device.online once, by whichever instance", async (t) => {
    const c = await setup(t);
    if (!c) return;
    const s = await twoInstances(c);
    t.after(() => Promise.all(s.monitors.map((m) => m.stop())));
    await s.disconnect("A");
    s.clock.advance(6 * minute);
    await waitUntil(() => s.raised.length > 0, 5_000, "device.offline");
    await s.ticked();
    assert.deepEqual(s.raised, [{ type: "device.offline", by: "A" }]);

    await s.connect("B");
    await waitUntil(() => s.raised.length > 1, 5_000, "device.online");
    await s.ticked();
    assert.deepEqual(
      s.raised.map((r) => r.type),
      ["device.offline", "device.online"],
    );
    assert.deepEqual(await c.repos.alerts.openEpisodes(), [], "the episode is closed");

    // Offline again (on B), and A, which raised the first episode, is gone when the device returns.
    await s.disconnect("B");
    s.clock.advance(6 * minute);
    await waitUntil(() => s.raised.length > 2, 5_000, "the second device.offline");
    assert.deepEqual(s.raised.at(-1), { type: "device.offline", by: "B" });
    await s.monitors[1]!.stop();
    await s.connect("A");
    await waitUntil(
      () => s.raised.length > 3,
      5_000,
      "device.online from A, which did not raise the episode",
    );
    await s.ticked(["A"]);
    assert.deepEqual(s.raised.at(-1), { type: "device.online", by: "A" });
    assert.equal(s.raised.length, 4);
  });
});

repositorySuites("alert deliveries in a cluster", ({ setup }) => {
  test("two instances working one queue attempt each delivery once", async (t) => {
    const c = await setup(t);
    if (!c) return;
    const hook = await receiver(t);
    const clock = new TestClock(Date.now());
    const box = new SecretBox(randomBytes(32));
    const [a, b] = [1, 2].map(() =>
      alertsService({
        repos: c.repos,
        box,
        clock,
        allowPrivate: ["loopback"],
        version: "0.0.0",
        shared: true,
      }),
    ) as [AlertsService, AlertsService];
    const user = await c.user({ role: "admin" });
    const project = await c.project(user.id);
    const principal = { user, via: "token", credentialId: "tok_1" } as Principal;
    await a.createWebhook(principal, project.id, { url: hook.url });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++)
      ids.push(...(await a.raise({ projectId: project.id, type: "test", message: `alert ${i}` })));
    const failed = (error: unknown) => assert.fail(error as Error);
    // Both instances' monitors tick (at most two attempts per webhook at once on each).
    await waitUntil(
      async () => {
        await Promise.all([a.deliverDue(failed), b.deliverDue(failed)]);
        for (const id of ids) if ((await c.repos.alerts.delivery(id))?.status !== "delivered") return false;
        return true;
      },
      10_000,
      "every delivery delivered",
    );
    await Promise.all([a.stop(), b.stop()]);
    assert.deepEqual(
      hook.received.map((r) => r.body.message).sort(),
      ["alert 0", "alert 1", "alert 2", "alert 3", "alert 4"],
      "each delivery reached the receiver once",
    );
  });

  test("a delivery's claim is by the database's clock: an instance whose clock runs ahead does not take one another holds", async (t) => {
    const c = await setup(t);
    if (!c) return;
    const hook = await receiver(t);
    const box = new SecretBox(randomBytes(32));
    const [a, ahead] = [0, 60_000].map((skew) =>
      alertsService({
        repos: c.repos,
        box,
        clock: new TestClock(Date.now() + skew),
        allowPrivate: ["loopback"],
        version: "0.0.0",
        shared: true,
      }),
    ) as [AlertsService, AlertsService];
    t.after(() => Promise.all([a.stop(), ahead.stop()]));
    const user = await c.user({ role: "admin" });
    const project = await c.project(user.id);
    const principal = { user, via: "token", credentialId: "tok_1" } as Principal;
    await a.createWebhook(principal, project.id, { url: hook.url });
    const [id] = await a.raise({ projectId: project.id, type: "test", message: "once" });
    const due = (await c.repos.alerts.delivery(id!))!.nextAttemptAt;
    // Instance A claims it for its attempt: held 15 s from the database's now.
    const until = await c.repos.alerts.claimDelivery(id!, due, 15_000, false);
    assert.ok(until !== null && Math.abs(until - (Date.now() + 15_000)) < 5_000, `claimed until ${until}`);
    assert.equal(
      await c.repos.alerts.claimDelivery(id!, until, 15_000, false),
      null,
      "not due by the database",
    );
    // The instance whose clock is a minute ahead takes the claim for over: it does not attempt.
    await ahead.attempt(id!);
    assert.equal(hook.received.length, 0, "no second attempt");
    assert.equal((await c.repos.alerts.delivery(id!))?.nextAttemptAt, until);
    // A's attempt cut short gives the claim back: due again, and attempted once.
    await c.repos.alerts.releaseDelivery(id!, until!, due);
    await ahead.attempt(id!);
    assert.deepEqual(
      hook.received.map((r) => r.body.message),
      ["once"],
    );
  });

  test("a rule added through another instance is in force within seconds", async (t) => {
    const c = await setup(t);
    if (!c) return;
    const s = await twoInstances(c, { rule: false });
    t.after(() => Promise.all(s.monitors.map((m) => m.stop())));
    await s.disconnect("A");
    s.clock.advance(6 * minute);
    await s.ticked();
    assert.deepEqual(s.raised, [], "no rule yet");
    // Added through instance B: A's own service never hears of it.
    await c.repos.alerts.insertRule({
      id: "rule_2",
      projectId: s.ids.projectId,
      kind: "device_offline",
      minutes: 5,
      count: null,
      windowMinutes: null,
      createdAt: s.clock.now(),
    });
    s.clock.advance(5_000);
    await waitUntil(() => s.raised.length > 0, 5_000, "device.offline");
    assert.deepEqual(s.raised, [{ type: "device.offline", by: "A" }]);
  });
});
