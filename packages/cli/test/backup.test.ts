import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { SdkClient } from "@sdk/client";
import { SimulatedDevice } from "@sdk/simulator";
import { runNode, startServerProcess, waitUntil } from "@sdk/test-helpers";
import { sdk, tempDir } from "./helpers.ts";

const serverMain = fileURLToPath(import.meta.resolve("@sdk/server/main"));

test("sdk backup streams the archive to a file while a device writes; the archive restores; a member is refused", async (t) => {
  const server = await startServerProcess(t, tempDir(t, "sdk-cli-server-"), { LOG_LEVEL: "warn" });
  const anon = new SdkClient({ baseUrl: server.url });
  const admin = await anon.api.register({
    body: { email: "admin@example.com", password: "correct horse battery", issueToken: true },
  });
  const member = await anon.api.register({
    body: { email: "member@example.com", password: "correct horse battery", issueToken: true },
  });
  const memberClient = new SdkClient({ baseUrl: server.url, token: member.token!.token });
  const project = await memberClient.api.createProject({ body: { name: "p" } });
  const { device, credentials } = await memberClient.api.createDevice({
    params: { projectId: project.id },
    body: { name: "d", board: "pico_w" },
  });
  const sim = new SimulatedDevice({
    server: new URL(server.url).host,
    deviceId: credentials.deviceId,
    secret: credentials.secret,
    reconnect: false,
  });
  t.after(() => sim.stop());
  sim.start();
  await sim.waitFor("connected");
  let n = 0;
  const timer = setInterval(() => sim.connected && sim.sendState("counter", n++), 1);
  t.after(() => clearInterval(timer));
  const ids = { projectId: project.id, deviceId: device.id };
  await waitUntil(
    async () => (await memberClient.api.getDeviceState({ params: ids })).length > 0,
    30_000,
    "the device's state stored",
  );

  const home = tempDir(t, "sdk-home-");
  const cwd = tempDir(t, "sdk-cwd-");
  const env = { SDK_TOKEN: admin.token!.token, SDK_HOST: server.url };
  const result = await sdk(t, ["backup", "--output", "server.tar.gz", "--json"], {
    home,
    cwd,
    env,
    timeoutMs: 60_000,
  });
  assert.equal(result.code, 0, result.stderr);
  const summary = JSON.parse(result.stdout) as { file: string; bytes: number; sha256: string; files: number };
  assert.equal(summary.file, path.join(cwd, "server.tar.gz"));
  const bytes = fs.readFileSync(summary.file);
  assert.equal(summary.bytes, bytes.length);
  assert.equal(summary.sha256, createHash("sha256").update(bytes).digest("hex"));
  assert.equal(summary.files, 2, "sdk.db and secret.key");
  assert.deepEqual(fs.readdirSync(cwd), ["server.tar.gz"], "no partial file left");

  const human = await sdk(t, ["backup"], { home, cwd, env, timeoutMs: 60_000 });
  assert.equal(human.code, 0, human.stderr);
  assert.match(human.stdout, /Backup written to .*sdk-backup-.*\.tar\.gz\n.*compressed \(2 files/);
  assert.match(human.stdout, /Restore with: sdk-server restore sdk-backup-/);
  assert.equal(fs.readdirSync(cwd).filter((f) => f.startsWith("sdk-backup-")).length, 1);

  const refused = await sdk(t, ["backup", "--output", "nope.tar.gz"], {
    home,
    cwd,
    env: { SDK_TOKEN: member.token!.token, SDK_HOST: server.url },
  });
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /Only admins can do this/);
  assert.equal(fs.existsSync(path.join(cwd, "nope.tar.gz")), false);
  clearInterval(timer);

  const restored = path.join(tempDir(t, "sdk-restored-"), "data");
  const restore = await runNode(t, {
    args: [serverMain, "restore", summary.file, "--data-dir", restored],
    env: { PATH: process.env.PATH ?? "" },
  });
  assert.equal(restore.code, 0, restore.stderr);
  const again = await startServerProcess(t, restored, { LOG_LEVEL: "warn" });
  const state = await new SdkClient({ baseUrl: again.url, token: member.token!.token }).api.getDeviceState({
    params: ids,
  });
  assert.equal(state[0]?.entityId, "counter");
});

test("sdk backup keeps only a whole archive, under a bare name whatever the server's header says", async (t) => {
  const server = await startServerProcess(t, tempDir(t, "sdk-cli-server-"), { LOG_LEVEL: "warn" });
  const admin = await new SdkClient({ baseUrl: server.url }).api.register({
    body: { email: "admin@example.com", password: "correct horse battery", issueToken: true },
  });
  const response = await fetch(`${server.url}/v1/admin/backup`, {
    headers: { authorization: `Bearer ${admin.token!.token}` },
  });
  const archive = Buffer.from(await response.arrayBuffer());
  const files = response.headers.get("x-sdk-backup-files")!;

  // A server (or something in between) that names "../" paths and sends whole or cut-short archives.
  let body = archive;
  const fake = http.createServer((_request, reply) => {
    reply.writeHead(200, {
      "content-type": "application/octet-stream",
      "content-disposition": 'attachment; filename="../../escaped.tar.gz"',
      "x-sdk-backup-files": files,
      "x-sdk-backup-bytes": "1",
    });
    reply.end(body);
  });
  await new Promise<void>((resolve) => fake.listen(0, "127.0.0.1", resolve));
  t.after(() => fake.close());
  const url = `http://127.0.0.1:${(fake.address() as { port: number }).port}`;
  const home = tempDir(t, "sdk-home-");
  const parent = tempDir(t, "sdk-cwd-");
  const cwd = path.join(parent, "a", "b");
  fs.mkdirSync(cwd, { recursive: true });
  const env = { SDK_TOKEN: "sdk_test", SDK_HOST: url };

  const whole = await sdk(t, ["backup"], { home, cwd, env, timeoutMs: 60_000 });
  assert.equal(whole.code, 0, whole.stderr);
  assert.deepEqual(fs.readdirSync(cwd), ["sdk-backup.tar.gz"]);
  assert.deepEqual(fs.readdirSync(parent), ["a"], "nothing written outside the current directory");
  fs.rmSync(path.join(cwd, "sdk-backup.tar.gz"));

  for (const cut of [archive.subarray(0, archive.length - 8), archive.subarray(0, archive.length / 2)]) {
    body = cut;
    const refused = await sdk(t, ["backup", "--output", "x.tar.gz"], { home, cwd, env, timeoutMs: 60_000 });
    assert.equal(refused.code, 1, refused.stdout);
    assert.match(
      refused.stderr,
      /The backup received is not whole: the archive is incomplete.*Nothing was kept/,
    );
    assert.deepEqual(fs.readdirSync(cwd), [], "neither the archive nor a .partial file is left");
  }
});
