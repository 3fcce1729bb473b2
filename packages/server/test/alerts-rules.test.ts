import assert from "node:assert/strict";
import { test } from "node:test";
import { deployScript } from "@sdk/test-helpers";
import type { EventBus } from "../src/events/bus.ts";
import {
  allowLoopback,
  minute,
  notFound,
  ownerProject,
  presence,
  receiver,
  untilDelivered,
  verifies,
} from "./helpers/alerts.ts";
import { TestClock } from "./helpers/clock.ts";
import { scriptProject, simulatedBoard } from "./helpers/script-project.ts";
import { startTestServer, tempDir } from "./helpers/server.ts";

test("a device offline for N minutes alerts once, signed; back online follows; other projects hear nothing", async (t) => {
  const clock = new TestClock();
  const hook = await receiver(t);
  const s = await scriptProject(t, { clock, env: allowLoopback });
  const projectId = s.project.id;
  const webhook = await s.client.api.createWebhook({ params: { projectId }, body: { url: hook.url } });
  assert.match(webhook.secret, /^whsec_/);
  assert.ok(
    !("secret" in (await s.client.api.listWebhooks({ params: { projectId } }))[0]!),
    "secret shown once",
  );
  const rule = await s.client.api.createAlertRule({
    params: { projectId },
    body: { kind: "device_offline", minutes: 5 },
  });
  assert.equal(rule.minutes, 5);

  // Another user with the same rule and a webhook to a receiver of their own: their project is not told.
  const theirHook = await receiver(t);
  const other = await s.user();
  const theirs = await other.client.api.createProject({ body: { name: "theirs" } });
  await other.client.api.createWebhook({ params: { projectId: theirs.id }, body: { url: theirHook.url } });
  await other.client.api.createAlertRule({
    params: { projectId: theirs.id },
    body: { kind: "device_offline", minutes: 5 },
  });

  let deviceId = "";
  const events = presence(s, () => deviceId);
  const { device, credentials, sim } = await s.onlineDevice();
  deviceId = device.id;
  await sim.stop();
  await events.until("disconnected", 1);
  clock.advance(5 * minute);
  await hook.waitFor("device.offline");
  const [offline] = hook.of("device.offline");
  assert.ok(verifies(webhook.secret, offline!), "the signature verifies with the secret shown at creation");
  assert.equal(offline!.headers["x-sdk-event"], "device.offline");
  assert.equal(offline!.headers["x-sdk-delivery"], offline!.body.id);
  assert.match(String(offline!.headers["x-sdk-timestamp"]), /^\d+$/);
  assert.equal(offline!.body.project.id, projectId);
  assert.deepEqual(offline!.body.device, { id: device.id, name: device.name });
  assert.equal(offline!.body.rule.id, rule.id);

  clock.advance(30 * minute); // still the same episode: no second alert
  const back = simulatedBoard(t, new URL(s.url).host, credentials);
  back.start();
  await back.waitFor("connected");
  await hook.waitFor("device.online");
  assert.equal(hook.of("device.offline").length, 1, "one alert for one episode");
  assert.ok(
    hook.received.every((r) => r.body.project.id === projectId),
    "nothing for the other user's project",
  );
  assert.ok(verifies(webhook.secret, hook.of("device.online")[0]!));

  const log = await s.client.api.listAlertDeliveries({ params: { projectId }, query: {} });
  assert.deepEqual(
    log.map((d) => [d.type, d.status]),
    [
      ["device.online", "delivered"],
      ["device.offline", "delivered"],
    ],
  );
  assert.equal(log[1]!.attempts[0]!.status, 200);
  assert.deepEqual(
    await other.client.api.listAlertDeliveries({ params: { projectId: theirs.id }, query: {} }),
    [],
  );
  // The owner's alerts were sent (and recorded) after the stranger's rule existed: had any gone to
  // the stranger's webhook, its receiver would have it by now.
  assert.equal(theirHook.received.length, 0, "the other user's receiver heard nothing");
});

test("another user cannot read or change a project's rules, webhooks or deliveries", async (t) => {
  const hook = await receiver(t);
  const s = await startTestServer(t, { env: allowLoopback });
  const owner = await s.user();
  const stranger = await s.user();
  const project = await owner.client.api.createProject({ body: { name: "p" } });
  const projectId = project.id;
  const webhook = await owner.client.api.createWebhook({ params: { projectId }, body: { url: hook.url } });
  const rule = await owner.client.api.createAlertRule({
    params: { projectId },
    body: { kind: "deployment" },
  });
  const api = stranger.client.api;
  await notFound(api.listAlertRules({ params: { projectId } }));
  await notFound(api.createAlertRule({ params: { projectId }, body: { kind: "deployment" } }));
  await notFound(
    api.updateAlertRule({
      params: { projectId, ruleId: rule.id },
      body: { kind: "device_offline", minutes: 1 },
    }),
  );
  await notFound(api.deleteAlertRule({ params: { projectId, ruleId: rule.id } }));
  await notFound(api.listWebhooks({ params: { projectId } }));
  await notFound(api.createWebhook({ params: { projectId }, body: { url: hook.url } }));
  await notFound(api.deleteWebhook({ params: { projectId, webhookId: webhook.id } }));
  await notFound(api.testWebhook({ params: { projectId, webhookId: webhook.id } }));
  await notFound(api.listAlertDeliveries({ params: { projectId }, query: {} }));
  assert.equal(hook.received.length, 0);
  assert.deepEqual(
    (await owner.client.api.listAlertRules({ params: { projectId } })).map((r) => [r.id, r.kind]),
    [[rule.id, "deployment"]],
    "the stranger changed nothing",
  );
  const changed = await owner.client.api.updateAlertRule({
    params: { projectId, ruleId: rule.id },
    body: { kind: "script_errors", count: 3, windowMinutes: 2 },
  });
  assert.deepEqual(
    [changed.id, changed.kind, changed.count, changed.windowMinutes],
    [rule.id, "script_errors", 3, 2],
  );
  assert.equal((await owner.client.api.listWebhooks({ params: { projectId } })).length, 1);
});

test("script failures above the rate alert once per episode; a failed deployment alerts once", async (t) => {
  const clock = new TestClock();
  const hook = await receiver(t);
  const s = await scriptProject(t, { clock, env: allowLoopback });
  const projectId = s.project.id;
  await s.client.api.createWebhook({ params: { projectId }, body: { url: hook.url } });
  await s.client.api.createAlertRule({
    params: { projectId },
    body: { kind: "script_errors", count: 3, windowMinutes: 1 },
  });
  await s.client.api.createAlertRule({ params: { projectId }, body: { kind: "deployment" } });
  const { device } = await s.addDevice();
  const fail = (kind: "error" | "timeout") =>
    s.server.bus.publish("script.failed", { projectId, deviceId: device.id, at: clock.now(), kind });
  await fail("error");
  await fail("timeout");
  clock.advance(61_000); // those two fall out of the window
  await fail("error");
  await fail("error");
  let log = await s.client.api.listAlertDeliveries({ params: { projectId }, query: {} });
  assert.deepEqual(log, [], "below the rate: no alert");
  for (let i = 0; i < 6; i++) await fail("timeout");
  await s.server.bus.publish("deployment.failed", {
    actorId: s.auth.user.id,
    projectId,
    deploymentId: "dep_x",
  });
  await s.server.bus.publish("deployment.failed", {
    actorId: s.auth.user.id,
    projectId,
    deploymentId: "dep_x",
  });
  log = await s.client.api.listAlertDeliveries({ params: { projectId }, query: {} });
  assert.deepEqual(log.map((d) => d.type).sort(), ["deployment.failed", "script.errors"]);
  await hook.waitFor("script.errors");
  await hook.waitFor("deployment.failed");
  assert.equal(hook.of("script.errors")[0]!.body.device.id, device.id);
});

test("a flapping device (back within N minutes) raises nothing; the next long outage alerts once", async (t) => {
  const clock = new TestClock();
  const hook = await receiver(t);
  const s = await scriptProject(t, { clock, env: allowLoopback });
  const projectId = s.project.id;
  await s.client.api.createWebhook({ params: { projectId }, body: { url: hook.url } });
  await s.client.api.createAlertRule({ params: { projectId }, body: { kind: "device_offline", minutes: 5 } });
  let deviceId = "";
  const events = presence(s, () => deviceId);
  const { device, credentials, sim } = await s.onlineDevice();
  deviceId = device.id;
  let board = sim;
  for (let i = 1; i <= 3; i++) {
    await board.stop();
    await events.until("disconnected", i);
    clock.advance(4 * minute);
    board = simulatedBoard(t, new URL(s.url).host, credentials);
    board.start();
    await events.until("connected", i);
    clock.advance(minute);
  }
  await board.stop();
  await events.until("disconnected", 4);
  clock.advance(5 * minute);
  await hook.waitFor("device.offline");
  assert.deepEqual(
    hook.received.map((r) => r.body.type),
    ["device.offline"],
    "the short outages before raised nothing",
  );
});

test("deployment rule: a deploy that does not load and a rollback each alert", async (t) => {
  const hook = await receiver(t);
  const s = await scriptProject(t, { env: allowLoopback });
  const projectId = s.project.id;
  await s.client.api.createWebhook({ params: { projectId }, body: { url: hook.url } });
  await s.client.api.createAlertRule({ params: { projectId }, body: { kind: "deployment" } });
  const script = (word: string) => `import { DeviceScript } from "@sdk/device";
${word === "broken" ? 'throw new Error("broken at load");' : ""}
export default class S extends DeviceScript {
  onDeviceConnect() { console.log("${word}"); }
}`;
  const v1 = await deployScript(t, s.client, projectId, script("one"), { skipTypeCheck: true });
  await deployScript(t, s.client, projectId, script("two"), { skipTypeCheck: true });
  const broken = await deployScript(t, s.client, projectId, script("broken"), { skipTypeCheck: true });
  assert.equal(broken.status, "failed");
  await hook.waitFor("deployment.failed");
  const failed = hook.of("deployment.failed")[0]!.body;
  assert.deepEqual(failed.deployment, { id: broken.id, version: 3 });
  assert.match(failed.message, /broken at load/);

  await s.client.api.activateDeployment({ params: { projectId, deploymentId: v1.id } });
  await hook.waitFor("deployment.rolled_back");
  const back = hook.of("deployment.rolled_back")[0]!.body;
  assert.deepEqual(back.deployment, { id: v1.id, version: 1 });
  assert.equal(back.details.fromVersion, 2);
  assert.equal(hook.received.length, 2, "deploying v1 and v2 forward raised nothing");
});

test("after a restart, a device that does not come back alerts N minutes after the start", async (t) => {
  const clock = new TestClock();
  const hook = await receiver(t);
  const dataDir = tempDir(t);
  const s = await scriptProject(t, { clock, dataDir, env: allowLoopback });
  const projectId = s.project.id;
  await s.client.api.createWebhook({ params: { projectId }, body: { url: hook.url } });
  await s.client.api.createAlertRule({ params: { projectId }, body: { kind: "device_offline", minutes: 5 } });
  const { device, sim } = await s.onlineDevice();
  await s.server.close();
  await sim.stop();

  clock.advance(60 * minute); // the server was down an hour: that is not the device's outage
  const restarted = await startTestServer(t, { clock, dataDir, env: allowLoopback });
  const startedAt = clock.now();
  clock.advance(5 * minute);
  await hook.waitFor("device.offline");
  const alert = hook.of("device.offline")[0]!.body;
  assert.equal(alert.device.id, device.id);
  assert.equal(alert.details.offlineSince, new Date(startedAt).toISOString());
  assert.ok(restarted.url);
});

test("a restart does not repeat the alert of an episode still open", async (t) => {
  const clock = new TestClock();
  const answers: number[] = [];
  const hook = await receiver(t, answers);
  const dataDir = tempDir(t);
  const s = await scriptProject(t, { clock, dataDir, env: allowLoopback });
  const projectId = s.project.id;
  const webhook = await s.client.api.createWebhook({ params: { projectId }, body: { url: hook.url } });
  await s.client.api.createAlertRule({ params: { projectId }, body: { kind: "device_offline", minutes: 5 } });
  let deviceId = "";
  const events = presence(s, () => deviceId);
  const { device, sim } = await s.onlineDevice();
  deviceId = device.id;
  await sim.stop();
  await events.until("disconnected", 1);
  clock.advance(5 * minute);
  await hook.waitFor("device.offline");
  await untilDelivered(s.client, { projectId }, "the offline alert recorded");
  await s.server.close();

  // The device is still offline after the restart. A test delivery answered 500 is retried by the
  // same monitor pass that would raise a second device.offline, after it: once the retry arrives,
  // that pass has run with the device offline long past N minutes.
  const restarted = await startTestServer(t, { clock, dataDir, env: allowLoopback });
  const api = restarted.client(s.auth.token!.token).api;
  answers.push(500);
  const test = await api.testWebhook({ params: { projectId, webhookId: webhook.id } });
  assert.equal(test.status, "pending");
  clock.advance(10 * minute);
  await hook.waitFor("test", 2);
  assert.deepEqual(
    (await api.listAlertDeliveries({ params: { projectId }, query: {} })).map((d) => d.type),
    ["test", "device.offline"],
    "no second device.offline for the same episode",
  );
  assert.equal(hook.of("device.offline").length, 1);
});

test("after a restart, an open script-errors episode ends after a quiet window; the next burst alerts", async (t) => {
  const clock = new TestClock();
  const answers: number[] = [];
  const hook = await receiver(t, answers);
  const dataDir = tempDir(t);
  const first = await startTestServer(t, { clock, dataDir, env: allowLoopback });
  const { client, auth, params } = await ownerProject(first);
  const webhook = await client.api.createWebhook({ params, body: { url: hook.url } });
  await client.api.createAlertRule({ params, body: { kind: "script_errors", count: 2, windowMinutes: 1 } });
  const { device } = await client.api.createDevice({ params, body: { name: "d", board: "pico_w" } });
  const fail = (s: { server: { bus: EventBus } }) =>
    s.server.bus.publish("script.failed", { ...params, deviceId: device.id, at: clock.now(), kind: "error" });
  await fail(first);
  await fail(first);
  await hook.waitFor("script.errors");
  await first.server.close();

  const second = await startTestServer(t, { clock, dataDir, env: allowLoopback });
  const api = second.client(auth.token!.token).api;
  // No failure since the restart, for a whole window: the monitor pass that ends the episode then
  // retries a test delivery (answered 500), so once that retry arrives the episode is closed.
  answers.push(500);
  assert.equal((await api.testWebhook({ params: { ...params, webhookId: webhook.id } })).status, "pending");
  clock.advance(2 * minute);
  await hook.waitFor("test", 2);
  assert.equal(hook.of("script.errors").length, 1);
  await fail(second);
  await fail(second);
  await hook.waitFor("script.errors", 2);
});
