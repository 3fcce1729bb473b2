import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { test } from "node:test";
import { SdkClient } from "@sdk/client";
import { deviceCloseCodes, parseRestartHint, restartCloseReason, restartRetry } from "@sdk/protocol";
import pino from "pino";
import type { Extension, Server } from "../src/app.ts";
import { type Lifecycle, Lifecycles } from "../src/lifecycle/lifecycle.ts";
import { createTestServer } from "./helpers/server.ts";
import { basic, hello, openSocket, wsUrl } from "./helpers/sockets.ts";

test("lifecycle: parts start once the server listens, and stop in reverse order before HTTP and the database close", async (t) => {
  const steps: string[] = [];
  let server: Server | undefined;
  let deviceId = "";
  const recorder =
    (name: string): Extension =>
    () => ({
      name,
      start() {
        steps.push(`start ${name} (listening: ${server!.app.server.listening})`);
      },
      async stop() {
        // Extensions stop first: the built-in parts (the device link among them) are still up.
        const online = await server!.services.deviceLink.isOnline(deviceId);
        const users = await server!.database.db.selectFrom("users").select("id").execute();
        steps.push(
          `stop ${name} (listening: ${server!.app.server.listening}, device online: ${online}, users: ${users.length})`,
        );
      },
    });
  server = await createTestServer(t, { extensions: [recorder("first"), recorder("second")] });
  assert.deepEqual(steps, [], "building a server starts nothing");

  const url = await server.listen();
  assert.deepEqual(steps, ["start first (listening: true)", "start second (listening: true)"]);

  const anon = new SdkClient({ baseUrl: url });
  const { token } = await anon.api.register({
    body: { email: "a@example.com", password: "correct horse battery", issueToken: true },
  });
  const client = new SdkClient({ baseUrl: url, token: token!.token });
  const project = await client.api.createProject({ body: { name: "p" } });
  const { device, credentials } = await client.api.createDevice({
    params: { projectId: project.id },
    body: { name: "d", board: "pico_w" },
  });
  deviceId = device.id;
  const dev = await openSocket(t, wsUrl(url, "/v1/device"), {
    headers: basic(device.id, credentials.secret),
  });
  dev.send(hello());
  await dev.inbox.type("welcome");

  await server.close({ restart: true });
  assert.deepEqual(steps.slice(2), [
    "stop second (listening: true, device online: true, users: 1)",
    "stop first (listening: true, device online: true, users: 1)",
  ]);
  assert.deepEqual(await dev.closed, {
    code: deviceCloseCodes.serviceRestart,
    reason: restartCloseReason(),
  });
  assert.deepEqual(parseRestartHint((await dev.closed).reason), {
    minMs: restartRetry.minMs,
    maxMs: restartRetry.maxMs,
  });
  await server.close(); // twice is harmless
  assert.equal(steps.length, 4);
});

test("lifecycle: a stop that is not a restart closes device sockets with 1001, without a retry hint", async (t) => {
  const server = await createTestServer(t);
  const url = await server.listen();
  const anon = new SdkClient({ baseUrl: url });
  const { token } = await anon.api.register({
    body: { email: "a@example.com", password: "correct horse battery", issueToken: true },
  });
  const client = new SdkClient({ baseUrl: url, token: token!.token });
  const project = await client.api.createProject({ body: { name: "p" } });
  const { device, credentials } = await client.api.createDevice({
    params: { projectId: project.id },
    body: { name: "d", board: "pico_w" },
  });
  const headers = basic(device.id, credentials.secret);
  const dev = await openSocket(t, wsUrl(url, "/v1/device"), { headers });
  dev.send(hello());
  await dev.inbox.type("welcome");
  // Never said hello: closed by the socket layer rather than the device link, the same way.
  const silent = await openSocket(t, wsUrl(url, "/v1/device"), { headers });

  await server.close();
  for (const closed of [await dev.closed, await silent.closed]) {
    assert.deepEqual(closed, { code: deviceCloseCodes.goingAway, reason: "server shutting down" });
    assert.equal(parseRestartHint(closed.reason), null);
  }
});

test("lifecycle: a server that never listens starts nothing, still records its audit log, and closes cleanly", async (t) => {
  const steps: string[] = [];
  const server = await createTestServer(t, {
    extensions: [
      () => ({ name: "x", start: () => void steps.push("start"), stop: () => void steps.push("stop") }),
    ],
  });
  const registered = await server.app.inject({
    method: "POST",
    url: "/v1/auth/register",
    payload: { email: "a@example.com", password: "correct horse battery", issueToken: true },
  });
  assert.equal(registered.statusCode, 201, registered.body);
  const audit = await server.app.inject({
    method: "GET",
    url: "/v1/admin/audit",
    headers: { authorization: `Bearer ${registered.json().result.token.token}` },
  });
  assert.deepEqual(
    audit.json().result.map((e: { action: string }) => e.action),
    ["user.registered"],
  );
  await server.close();
  assert.deepEqual(steps, []);
});

test("lifecycle: a failed audit write is logged, and the request that caused it still answers", async (t) => {
  const lines: { level: number; msg: string; err?: { message: string } }[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(String(chunk)));
      done();
    },
  });
  const server = await createTestServer(t, { logger: pino({ level: "error" }, sink) });
  const url = await server.listen();
  const anon = new SdkClient({ baseUrl: url });
  const { token } = await anon.api.register({
    body: { email: "a@example.com", password: "correct horse battery", issueToken: true },
  });
  await server.database.db.schema.dropTable("auditLog").execute();
  const client = new SdkClient({ baseUrl: url, token: token!.token });
  const project = await client.api.createProject({ body: { name: "still created" } });
  assert.equal(project.name, "still created");
  const failure = lines.find((l) => l.msg === "event subscriber failed");
  assert.ok(failure, `the write failure is logged; got ${JSON.stringify(lines)}`);
  assert.match(failure.err?.message ?? "", /audit_log/);
});

test("lifecycle: start goes in list order, stop in reverse; a part that fails to stop does not keep the others up", async () => {
  const steps: string[] = [];
  const errors: string[] = [];
  const part = (name: string, fail?: "start" | "stop"): Lifecycle => ({
    name,
    async start() {
      if (fail === "start") throw new Error(`${name} cannot start`);
      steps.push(`start ${name}`);
    },
    stop() {
      steps.push(`stop ${name}`);
      if (fail === "stop") throw new Error(`${name} cannot stop`);
    },
  });
  const parts = new Lifecycles([part("a"), part("b", "stop"), part("c")], (error, name) =>
    errors.push(`${name}: ${(error as Error).message}`),
  );
  await parts.start();
  await parts.stop();
  await parts.stop(); // nothing is stopped twice
  assert.deepEqual(steps, ["start a", "start b", "start c", "stop c", "stop b", "stop a"]);
  assert.deepEqual(errors, ["b: b cannot stop"]);

  steps.length = 0;
  const broken = new Lifecycles([part("a"), part("b", "start"), part("c")], () => {});
  await assert.rejects(broken.start(), /b cannot start/);
  assert.deepEqual(steps, ["start a", "stop a"], "what had started stops again");
});
