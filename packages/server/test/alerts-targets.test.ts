import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { networkInterfaces } from "node:os";
import { test } from "node:test";
import { SdkApiError } from "@sdk/client";
import { ConfigError, loadConfig } from "../src/config.ts";
import { refusedTarget } from "../src/lib/webhook-target.ts";
import { allowLoopback, ownerProject, receiver } from "./helpers/alerts.ts";
import { raw, startTestServer, tempDir } from "./helpers/server.ts";

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

test("a host name is checked on the address it resolves to when each attempt connects", async (t) => {
  const hook = await receiver(t);
  const dataDir = tempDir(t);
  const named = hook.url.replace("127.0.0.1", "localhost");
  const allowed = await startTestServer(t, { dataDir, env: allowLoopback });
  const { client, auth, params } = await ownerProject(allowed);
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
  const { client, auth, params } = await ownerProject(permissive);
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
