import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { DatabaseSync } from "node:sqlite";
import { test } from "node:test";
import { waitUntil } from "@sdk/test-helpers";
import { postWebhook } from "../src/lib/webhook-post.ts";
import {
  allowLoopback,
  ownerProject,
  receiver,
  tricklingReceiver,
  untilDelivered,
  verifies,
} from "./helpers/alerts.ts";
import { TestClock } from "./helpers/clock.ts";
import { postgresUrl } from "./helpers/postgres.ts";
import { startTestServer, tempDir } from "./helpers/server.ts";

test("a delivery answered 500 is retried after the backoff; the log shows both attempts", async (t) => {
  const clock = new TestClock();
  const hook = await receiver(t, [500]);
  const s = await startTestServer(t, { clock, env: allowLoopback });
  const { client, params } = await ownerProject(s);
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
  await untilDelivered(client, params, "the delivery marked delivered");
  const [delivery] = await client.api.listAlertDeliveries({ params, query: { webhookId: webhook.id } });
  assert.deepEqual(
    delivery!.attempts.map((a) => a.status),
    [500, 200],
  );
  assert.equal(delivery!.nextAttemptAt, null);
  assert.equal(hook.received[0]!.raw, hook.received[1]!.raw, "every attempt sends the same body");
  assert.ok(hook.received.every((r) => verifies(webhook.secret, r)));
});

test("a pending retry survives a restart; the delivery-time check refuses a target the admin no longer allows", async (t) => {
  const clock = new TestClock();
  const hook = await receiver(t, [500]);
  const dataDir = tempDir(t);
  const first = await startTestServer(t, { clock, dataDir, env: allowLoopback });
  const { client, auth, params } = await ownerProject(first, "owner@example.com");
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
  await untilDelivered(again, params, "the retried delivery recorded");
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

test("on PostgreSQL: one alert per episode, a retried delivery and the log", async (t) => {
  const databaseUrl = await postgresUrl(t);
  if (!databaseUrl) return;
  const clock = new TestClock();
  const hook = await receiver(t, [503]);
  const s = await startTestServer(t, { clock, env: { ...allowLoopback, DATABASE_URL: databaseUrl } });
  const { client, params } = await ownerProject(s);
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
  await untilDelivered(client, params, "the retried delivery recorded");
  const log = await client.api.listAlertDeliveries({ params, query: { webhookId: webhook.id } });
  assert.deepEqual(
    log.map((d) => [d.type, d.attempts.map((a) => a.status)]),
    [["script.errors", [503, 200]]],
  );
});

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
  const { client, params } = await ownerProject(s);
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
  await untilDelivered(client, params, "the fast webhook's delivery recorded", { webhookId: fast.id });
});

test("pruning the log to the newest 500 finished deliveries keeps the pending ones", async (t) => {
  const clock = new TestClock();
  const hook = await receiver(t);
  const closed = http.createServer();
  await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
  const downUrl = `http://127.0.0.1:${(closed.address() as AddressInfo).port}/hook`;
  await new Promise<void>((resolve) => closed.close(() => resolve()));
  const s = await startTestServer(t, { clock, env: allowLoopback });
  const { client, params } = await ownerProject(s);
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

test("an attempt that fails before it posts is recorded as a failed attempt and retried on the schedule", async (t) => {
  const clock = new TestClock();
  const hook = await receiver(t);
  const dataDir = tempDir(t);
  const first = await startTestServer(t, { clock, dataDir, env: allowLoopback });
  const { client, auth, params } = await ownerProject(first);
  const webhook = await client.api.createWebhook({ params, body: { url: hook.url } });
  await first.server.close();
  // The stored webhook secret cannot be decrypted (it was damaged), so the attempt throws before posting.
  const sqlite = new DatabaseSync(path.join(dataDir, "sdk.db"));
  try {
    sqlite.prepare("UPDATE alert_webhooks SET secret_encrypted = ?").run("not a sealed value");
  } finally {
    sqlite.close();
  }

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
