import assert from "node:assert/strict";
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import net, { type AddressInfo } from "node:net";
import { networkInterfaces } from "node:os";
import path from "node:path";
import { type TestContext, test } from "node:test";
import { SdkApiError } from "@sdk/client";
import { deployScript, waitUntil } from "@sdk/test-helpers";
import { ConfigError, loadConfig } from "../src/config.ts";
import type { EventBus } from "../src/events/bus.ts";
import { postWebhook } from "../src/lib/webhook-post.ts";
import { refusedTarget } from "../src/lib/webhook-target.ts";
import { TestClock } from "./helpers/clock.ts";
import { postgresUrl } from "./helpers/postgres.ts";
import { scriptProject, simulatedBoard } from "./helpers/script-project.ts";
import { raw, startTestServer, tempDir } from "./helpers/server.ts";

interface Received {
  headers: http.IncomingHttpHeaders;
  raw: string;
  body: any;
}

/** A webhook receiver on 127.0.0.1 that answers each request with the next status of `answers` (then 200). */
async function receiver(t: TestContext, answers: number[] = []) {
  const received: Received[] = [];
  const server = http.createServer((request, response) => {
    let raw = "";
    request.setEncoding("utf8");
    request.on("data", (chunk) => {
      raw += chunk;
    });
    request.on("end", () => {
      received.push({ headers: request.headers, raw, body: JSON.parse(raw) });
      response.writeHead(answers.shift() ?? 200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    of: (type: string) => received.filter((r) => r.body.type === type),
    waitFor: (type: string, count = 1) =>
      waitUntil(
        () => received.filter((r) => r.body.type === type).length >= count,
        20_000,
        `${count} × ${type}`,
      ),
  };
}

/** What a receiver does, written from the docs: HMAC-SHA256 of `<timestamp>.<raw body>` with the secret. */
function verifies(secret: string, r: Received): boolean {
  const signed = `${r.headers["x-sdk-timestamp"]}.${r.raw}`;
  const expected = Buffer.from(`sha256=${createHmac("sha256", secret).update(signed).digest("hex")}`);
  const got = Buffer.from(String(r.headers["x-sdk-signature"]));
  return got.length === expected.length && timingSafeEqual(got, expected);
}

/** Counts the server's presence events of a device, so a test moves the clock only once the server has seen them. */
function presence(s: { server: { bus: EventBus } }, deviceId: () => string) {
  const seen = { connected: 0, disconnected: 0 };
  for (const type of ["device.connected", "device.disconnected"] as const) {
    s.server.bus.subscribe(type, (e) => {
      if (e.deviceId === deviceId()) seen[type === "device.connected" ? "connected" : "disconnected"]++;
    });
  }
  return {
    seen,
    until: (kind: "connected" | "disconnected", count: number) =>
      waitUntil(() => seen[kind] >= count, 20_000, `${count} × device.${kind}`),
  };
}

const allowLoopback = { WEBHOOK_ALLOW_PRIVATE: "loopback" };
const minute = 60_000;

async function notFound(call: Promise<unknown>) {
  await assert.rejects(call, (e: unknown) => e instanceof SdkApiError && e.status === 404);
}

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

test("a delivery answered 500 is retried after the backoff; the log shows both attempts", async (t) => {
  const clock = new TestClock();
  const hook = await receiver(t, [500]);
  const s = await startTestServer(t, { clock, env: allowLoopback });
  const { client } = await s.user();
  const project = await client.api.createProject({ body: { name: "p" } });
  const params = { projectId: project.id };
  const webhook = await client.api.createWebhook({ params, body: { url: hook.url, name: "ops" } });

  const first = await client.api.testWebhook({ params: { ...params, webhookId: webhook.id } });
  assert.equal(first.status, "pending");
  assert.deepEqual(
    first.attempts.map((a) => [a.status, a.error]),
    [[500, "the receiver answered 500"]],
  );
  const retryIn = Date.parse(first.nextAttemptAt!) - Date.parse(first.attempts[0]!.at);
  assert.ok(retryIn >= 8_000 && retryIn <= 12_000, `retried 10 s ± 20 % later (${retryIn} ms)`);
  clock.advance(12_000);
  await hook.waitFor("test", 2);
  await waitUntil(
    async () => (await client.api.listAlertDeliveries({ params, query: {} }))[0]?.status === "delivered",
    20_000,
    "the delivery marked delivered",
  );
  const [delivery] = await client.api.listAlertDeliveries({ params, query: { webhookId: webhook.id } });
  assert.deepEqual(
    delivery!.attempts.map((a) => a.status),
    [500, 200],
  );
  assert.equal(delivery!.nextAttemptAt, null);
  assert.equal(hook.received[0]!.raw, hook.received[1]!.raw, "every attempt sends the same body");
  assert.ok(hook.received.every((r) => verifies(webhook.secret, r)));
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

test("loopback and link-local targets are refused by default with a clear error; bad rules too", async (t) => {
  const s = await startTestServer(t);
  const { client, auth } = await s.user();
  const project = await client.api.createProject({ body: { name: "p" } });
  for (const url of [
    "http://127.0.0.1:9/hook",
    "http://localhost:9/hook",
    "http://[::1]:9/",
    "http://169.254.169.254/",
  ]) {
    await assert.rejects(
      client.api.createWebhook({ params: { projectId: project.id }, body: { url } }),
      (e: unknown) =>
        e instanceof SdkApiError &&
        e.status === 400 &&
        e.code === "invalid_request" &&
        /(loopback|link-local) address.*WEBHOOK_ALLOW_PRIVATE/.test(e.message),
      url,
    );
  }
  await assert.rejects(
    client.api.createWebhook({ params: { projectId: project.id }, body: { url: "ftp://example.com/" } }),
    (e: unknown) => e instanceof SdkApiError && e.status === 400,
  );
  assert.deepEqual(await client.api.listWebhooks({ params: { projectId: project.id } }), []);

  const badRule = await raw(`${s.url}/v1/projects/${project.id}/alerts/rules`, {
    method: "POST",
    headers: { authorization: `Bearer ${auth.token!.token}` },
    json: { kind: "device_offline", minutes: 0 },
  });
  assert.equal(badRule.status, 400);
  assert.equal(badRule.body.error.code, "invalid_request");
  assert.deepEqual(
    badRule.body.error.fields.map((f: { path: string }) => f.path),
    ["minutes"],
  );
  assert.deepEqual(await client.api.listAlertRules({ params: { projectId: project.id } }), []);
});

test("target ranges: what is refused by default and what the admin setting allows", () => {
  const byDefault = loadConfig({}).webhooks.allowPrivate;
  assert.deepEqual(byDefault, ["private"]);
  for (const ip of ["127.0.0.1", "::1", "::ffff:127.0.0.1", "169.254.169.254", "fe80::1", "0.0.0.0", "::"])
    assert.ok(refusedTarget(ip, byDefault, []), ip);
  for (const ip of ["192.168.1.10", "10.0.0.2", "93.184.216.34", "2606:2800:220:1::1"])
    assert.equal(refusedTarget(ip, byDefault, []), null, ip);
  const none = loadConfig({ WEBHOOK_ALLOW_PRIVATE: "none" }).webhooks.allowPrivate;
  assert.ok(refusedTarget("192.168.1.10", none, []));
  const all = loadConfig({ WEBHOOK_ALLOW_PRIVATE: "loopback, link-local,private" }).webhooks.allowPrivate;
  assert.equal(refusedTarget("127.0.0.1", all), null);
  assert.ok(refusedTarget("0.0.0.0", all), "the unspecified address is never a target");
  assert.throws(() => loadConfig({ WEBHOOK_ALLOW_PRIVATE: "everything" }), ConfigError);
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

test("a pending retry survives a restart; the delivery-time check refuses a target the admin no longer allows", async (t) => {
  const clock = new TestClock();
  const hook = await receiver(t, [500]);
  const dataDir = tempDir(t);
  const first = await startTestServer(t, { clock, dataDir, env: allowLoopback });
  const { client, auth } = await first.user("owner@example.com");
  const project = await client.api.createProject({ body: { name: "p" } });
  const params = { projectId: project.id };
  const webhook = await client.api.createWebhook({ params, body: { url: hook.url } });
  assert.equal(
    (await client.api.testWebhook({ params: { ...params, webhookId: webhook.id } })).status,
    "pending",
  );
  await first.server.close();

  // The same data, loopback still allowed: the queued retry goes out once due.
  const second = await startTestServer(t, { clock, dataDir, env: allowLoopback });
  const again = second.client(auth.token!.token);
  clock.advance(12_000);
  await hook.waitFor("test", 2);
  await waitUntil(
    async () => (await again.api.listAlertDeliveries({ params, query: {} }))[0]?.status === "delivered",
    20_000,
    "the retried delivery recorded",
  );
  await second.server.close();

  // The admin withdraws loopback: the stored webhook is refused at delivery time, with the reason.
  const third = await startTestServer(t, { clock, dataDir });
  const refused = await third.client(auth.token!.token).api.testWebhook({
    params: { ...params, webhookId: webhook.id },
  });
  assert.equal(refused.attempts[0]!.status, null);
  assert.match(refused.attempts[0]!.error!, /^refused: 127\.0\.0\.1 is a loopback address/);
  assert.equal(hook.of("test").length, 2, "nothing reached the receiver");
});

test("a host name is checked on the address it resolves to when each attempt connects", async (t) => {
  const hook = await receiver(t);
  const dataDir = tempDir(t);
  const named = hook.url.replace("127.0.0.1", "localhost");
  const allowed = await startTestServer(t, { dataDir, env: allowLoopback });
  const { client, auth } = await allowed.user();
  const project = await client.api.createProject({ body: { name: "p" } });
  const params = { projectId: project.id };
  const webhook = await client.api.createWebhook({ params, body: { url: named } });
  const ok = await client.api.testWebhook({ params: { ...params, webhookId: webhook.id } });
  assert.equal(ok.status, "delivered", JSON.stringify(ok.attempts));
  await allowed.server.close();

  const strict = await startTestServer(t, { dataDir });
  const refused = await strict.client(auth.token!.token).api.testWebhook({
    params: { ...params, webhookId: webhook.id },
  });
  assert.equal(refused.attempts[0]!.status, null);
  assert.match(
    refused.attempts[0]!.error!,
    /^refused: localhost resolves to (127\.0\.0\.1|::1) is a loopback address/,
  );
  assert.equal(hook.received.length, 1);
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

test("on PostgreSQL: one alert per episode, a retried delivery and the log", async (t) => {
  const databaseUrl = await postgresUrl(t);
  if (!databaseUrl) return;
  const clock = new TestClock();
  const hook = await receiver(t, [503]);
  const s = await startTestServer(t, { clock, env: { ...allowLoopback, DATABASE_URL: databaseUrl } });
  const { client } = await s.user();
  const project = await client.api.createProject({ body: { name: "p" } });
  const params = { projectId: project.id };
  const webhook = await client.api.createWebhook({ params, body: { url: hook.url } });
  await client.api.createAlertRule({ params, body: { kind: "script_errors", count: 2, windowMinutes: 1 } });
  const { device } = await client.api.createDevice({ params, body: { name: "d", board: "pico_w" } });
  for (let i = 0; i < 4; i++)
    await s.server.bus.publish("script.failed", {
      ...params,
      deviceId: device.id,
      at: clock.now(),
      kind: "error",
    });
  await hook.waitFor("script.errors");
  clock.advance(12_000);
  await hook.waitFor("script.errors", 2);
  await waitUntil(
    async () => (await client.api.listAlertDeliveries({ params, query: {} }))[0]?.status === "delivered",
    20_000,
    "the retried delivery recorded",
  );
  const log = await client.api.listAlertDeliveries({ params, query: { webhookId: webhook.id } });
  assert.deepEqual(
    log.map((d) => [d.type, d.attempts.map((a) => a.status)]),
    [["script.errors", [503, 200]]],
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

/** A receiver that never finishes its answer: it sends one byte of a status line every 100 ms. */
async function tricklingReceiver(t: TestContext) {
  const sockets = new Set<net.Socket>();
  let connections = 0;
  const server = net.createServer((socket) => {
    connections++;
    sockets.add(socket);
    const line = "HTTP/1.1 200 OK\r\nX-Slow: ".split("");
    const timer = setInterval(() => socket.write(line.shift() ?? "a"), 100);
    socket.on("error", () => undefined);
    socket.on("close", () => {
      clearInterval(timer);
      sockets.delete(socket);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(() => {
    for (const socket of sockets) socket.destroy();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    open: () => sockets.size,
    connections: () => connections,
  };
}

test("an attempt has a hard deadline: a receiver trickling bytes cannot hold it", async (t) => {
  const slow = await tricklingReceiver(t);
  const outcome = await postWebhook({
    url: slow.url,
    body: "{}",
    headers: {},
    allowed: ["loopback"],
    deadlineMs: 1_000,
  });
  assert.equal(outcome.status, null);
  assert.match(outcome.error!, /no answer within 1 s/);
  await waitUntil(() => slow.open() === 0, 20_000, "the request's connection closed");
});

test("a slow receiver holds up no other webhook's deliveries or retries", async (t) => {
  const clock = new TestClock();
  const slow = await tricklingReceiver(t);
  const hook = await receiver(t, [500, 500]);
  const s = await startTestServer(t, { clock, env: allowLoopback });
  const { client } = await s.user();
  const project = await client.api.createProject({ body: { name: "p" } });
  const params = { projectId: project.id };
  await client.api.createWebhook({ params, body: { url: slow.url, name: "slow" } });
  const fast = await client.api.createWebhook({ params, body: { url: hook.url, name: "fast" } });
  await client.api.createAlertRule({ params, body: { kind: "script_errors", count: 1, windowMinutes: 1 } });
  const { device } = await client.api.createDevice({ params, body: { name: "d", board: "pico_w" } });
  await s.server.bus.publish("script.failed", {
    ...params,
    deviceId: device.id,
    at: clock.now(),
    kind: "error",
  });
  await hook.waitFor("script.errors", 1);
  await waitUntil(() => slow.connections() >= 1, 20_000, "the slow receiver reached");
  for (let i = 2; i <= 3; i++) {
    clock.advance(60_000);
    await hook.waitFor("script.errors", i);
  }
  await waitUntil(
    async () =>
      (await client.api.listAlertDeliveries({ params, query: { webhookId: fast.id } }))[0]?.status ===
      "delivered",
    20_000,
    "the fast webhook's delivery recorded",
  );
});

test("the server's own interface addresses and IPv6 forms carrying a refused IPv4 are refused", () => {
  const own = ["127.0.0.1", "::1", "192.168.1.10", "172.17.0.1", "fd00::2"];
  for (const ip of ["192.168.1.10", "172.17.0.1", "fd00::2", "::ffff:192.168.1.10"]) {
    assert.match(
      refusedTarget(ip, ["private"], own)!,
      /this server's own host.*WEBHOOK_ALLOW_PRIVATE=loopback/,
      ip,
    );
  }
  assert.equal(refusedTarget("192.168.1.11", ["private"], own), null, "another host on the LAN");
  assert.equal(refusedTarget("192.168.1.10", ["loopback", "private"], own), null, "allowed with loopback");
  for (const ip of [
    "64:ff9b::7f00:1", // NAT64 of 127.0.0.1
    "64:ff9b::a9fe:a9fe", // NAT64 of 169.254.169.254
    "::127.0.0.1", // IPv4-compatible
    "::a9fe:a9fe",
    "2002:7f00:1::", // 6to4 of 127.0.0.1
    "2002:a9fe:a9fe::1",
    "64:ff9b::c0a8:10a", // NAT64 of 192.168.1.10, this host
  ]) {
    assert.ok(refusedTarget(ip, ["private"], own), ip);
  }
  assert.equal(refusedTarget("64:ff9b::5db8:d822", ["private"], own), null, "NAT64 of a public address");
  assert.equal(refusedTarget("2002:5db8:d822::1", ["private"], own), null, "6to4 of a public address");
  assert.ok(refusedTarget("::1", ["private"], own), "IPv6 loopback stays loopback");
});

test("a webhook to this machine's own non-loopback address is refused unless loopback is allowed", async (t) => {
  const local = Object.values(networkInterfaces())
    .flat()
    .find((i) => i && !i.internal && i.family === "IPv4")?.address;
  if (!local) {
    t.skip("this machine has no non-loopback IPv4 address");
    return;
  }
  const received: string[] = [];
  const server = http.createServer((request, response) => {
    received.push(request.url ?? "");
    request.resume();
    response.writeHead(200).end();
  });
  await new Promise<void>((resolve) => server.listen(0, local, resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const url = `http://${local}:${(server.address() as AddressInfo).port}/hook`;

  const dataDir = tempDir(t);
  const permissive = await startTestServer(t, { dataDir, env: allowLoopback });
  const { client, auth } = await permissive.user();
  const project = await client.api.createProject({ body: { name: "p" } });
  const params = { projectId: project.id };
  const webhook = await client.api.createWebhook({ params, body: { url } });
  assert.equal(
    (await client.api.testWebhook({ params: { ...params, webhookId: webhook.id } })).status,
    "delivered",
  );
  await permissive.server.close();

  const strict = await startTestServer(t, { dataDir });
  const api = strict.client(auth.token!.token).api;
  await assert.rejects(
    api.createWebhook({ params, body: { url } }),
    (e: unknown) => e instanceof SdkApiError && e.status === 400 && /own host/.test(e.message),
  );
  const refused = await api.testWebhook({ params: { ...params, webhookId: webhook.id } });
  assert.match(refused.attempts[0]!.error!, /own host/);
  assert.equal(received.length, 1, "the strict server sent nothing to its own address");
});

test("pruning the log to the newest 500 finished deliveries keeps the pending ones", async (t) => {
  const clock = new TestClock();
  const hook = await receiver(t);
  const closed = http.createServer();
  await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
  const downUrl = `http://127.0.0.1:${(closed.address() as AddressInfo).port}/hook`;
  await new Promise<void>((resolve) => closed.close(() => resolve()));
  const s = await startTestServer(t, { clock, env: allowLoopback });
  const { client } = await s.user();
  const project = await client.api.createProject({ body: { name: "p" } });
  const params = { projectId: project.id };
  const down = await client.api.createWebhook({ params, body: { url: downUrl, name: "down" } });
  const up = await client.api.createWebhook({ params, body: { url: hook.url, name: "up" } });
  for (let i = 0; i < 3; i++) {
    const pending = await client.api.testWebhook({ params: { ...params, webhookId: down.id } });
    assert.equal(pending.status, "pending");
  }
  for (let batch = 0; batch < 51; batch++) {
    await Promise.all(
      Array.from({ length: 10 }, () => client.api.testWebhook({ params: { ...params, webhookId: up.id } })),
    );
  }
  const log = await client.api.listAlertDeliveries({ params, query: { webhookId: down.id } });
  assert.deepEqual(
    log.map((d) => d.status),
    ["pending", "pending", "pending"],
    "the pending deliveries older than the newest 500 finished ones are still there",
  );
  const finished = await client.api.listAlertDeliveries({ params, query: { webhookId: up.id, limit: 500 } });
  assert.equal(finished.length, 500);
  assert.ok(finished.every((d) => d.status === "delivered"));
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
  await waitUntil(
    async () =>
      (await s.client.api.listAlertDeliveries({ params: { projectId }, query: {} }))[0]?.status ===
      "delivered",
    20_000,
    "the offline alert recorded",
  );
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
  const { client, auth } = await first.user();
  const project = await client.api.createProject({ body: { name: "p" } });
  const params = { projectId: project.id };
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

test("an attempt that fails before it posts is recorded as a failed attempt and retried on the schedule", async (t) => {
  const clock = new TestClock();
  const hook = await receiver(t);
  const dataDir = tempDir(t);
  const first = await startTestServer(t, { clock, dataDir, env: allowLoopback });
  const { client, auth } = await first.user();
  const project = await client.api.createProject({ body: { name: "p" } });
  const params = { projectId: project.id };
  const webhook = await client.api.createWebhook({ params, body: { url: hook.url } });
  await first.server.close();
  // Another key: the stored webhook secret cannot be decrypted, so the attempt throws before posting.
  fs.writeFileSync(path.join(dataDir, "secret.key"), randomBytes(32).toString("base64"));

  const second = await startTestServer(t, { clock, dataDir, env: allowLoopback });
  const delivery = await second.client(auth.token!.token).api.testWebhook({
    params: { ...params, webhookId: webhook.id },
  });
  assert.equal(delivery.status, "pending");
  assert.equal(delivery.attempts.length, 1);
  assert.equal(delivery.attempts[0]!.status, null);
  assert.match(delivery.attempts[0]!.error!, /^the attempt failed: /);
  assert.ok(Date.parse(delivery.nextAttemptAt!) >= clock.now() + 8_000, "retried on the schedule");
  assert.equal(hook.received.length, 0);
});
