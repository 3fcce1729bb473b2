import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import path from "node:path";
import { test } from "node:test";
import { SdkClient } from "@sdk/client";
import { webhookReceiver } from "@sdk/test-helpers";
import { sdk, startServer, tempDir } from "./helpers.ts";

const password = "correct horse battery";

test("sdk alerts: rules, a webhook with its secret shown once, a signed test delivery and the log", async (t) => {
  const { received, hookUrl, close } = await webhookReceiver(204);
  t.after(close);

  const { url } = await startServer(t, { WEBHOOK_ALLOW_PRIVATE: "loopback" });
  await new SdkClient({ baseUrl: url }).api.register({ body: { email: "ops@example.com", password } });
  const home = tempDir(t, "sdk-alerts-home-");
  const work = tempDir(t, "sdk-alerts-work-");
  const run = (args: string[], cwd = work, input?: string) => sdk(t, args, { home, cwd, input });
  const login = await run(
    ["login", "--host", url, "--email", "ops@example.com", "--password-stdin"],
    work,
    `${password}\n`,
  );
  assert.equal(login.code, 0, login.stderr);
  assert.equal((await run(["init", "fleet"])).code, 0);
  const dir = path.join(work, "fleet");

  const rule = await run(["alerts", "add", "offline", "--minutes", "10", "--json"], dir);
  assert.equal(rule.code, 0, rule.stderr);
  assert.equal(JSON.parse(rule.stdout).minutes, 10);
  const bad = await run(["alerts", "add", "offline"], dir);
  assert.notEqual(bad.code, 0);
  assert.match(bad.stderr, /--minutes/);
  assert.equal((await run(["alerts", "add", "script-errors", "--count", "5", "--window", "2"], dir)).code, 0);

  const added = await run(["alerts", "webhooks", "add", hookUrl, "--name", "ops"], dir);
  assert.equal(added.code, 0, added.stderr);
  const secret = /whsec_[\w-]+/.exec(added.stdout)?.[0];
  assert.ok(secret, "the secret is printed once");
  assert.match(added.stdout, /shown only now/);

  const list = JSON.parse((await run(["alerts", "list", "--json"], dir)).stdout);
  assert.deepEqual(
    list.rules.map((r: { kind: string }) => r.kind),
    ["device_offline", "script_errors"],
  );
  assert.equal(list.webhooks.length, 1);
  assert.doesNotMatch(JSON.stringify(list), /whsec_/, "the secret is not listed");
  const webhookId = list.webhooks[0].id;

  const sent = await run(["alerts", "webhooks", "test", webhookId, "--json"], dir);
  assert.equal(sent.code, 0, sent.stderr);
  assert.equal(JSON.parse(sent.stdout).status, "delivered");
  assert.equal(received.length, 1);
  const signed = `${received[0]!.timestamp}.${received[0]!.raw}`;
  const expected = `sha256=${createHmac("sha256", secret).update(signed).digest("hex")}`;
  assert.equal(received[0]!.signature, expected);

  const log = await run(["alerts", "deliveries"], dir);
  assert.equal(log.code, 0, log.stderr);
  assert.match(log.stdout, /test\s+whk_\S+\s+delivered\s+204/);

  assert.equal((await run(["alerts", "remove", webhookId], dir)).code, 0);
  assert.equal(JSON.parse((await run(["alerts", "list", "--json"], dir)).stdout).webhooks.length, 0);

  const help = await run(["alerts", "webhooks", "--help"]);
  assert.match(help.stdout, /X-Sdk-Signature/);
  assert.match(help.stdout, /secret/);
});
