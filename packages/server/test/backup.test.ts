import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { DatabaseSync } from "node:sqlite";
import { Writable } from "node:stream";
import { test } from "node:test";
import { SdkApiError, SdkClient } from "@sdk/client";
import {
  deployScript,
  freePort,
  serverEnv,
  spawnNode,
  startServerProcess,
  startTestServer,
  tempDir,
  waitUntil,
} from "@sdk/test-helpers";
import pino from "pino";
import { loadConfig } from "../src/config.ts";
import { prepareBackup, readArchive, writeArchive } from "../src/storage/backup-archive.ts";
import {
  download,
  env,
  fleet,
  highestLogged,
  loadDevices,
  mainScript,
  openFiles,
  restore,
  script,
} from "./helpers/backup.ts";
import { postgresUrl } from "./helpers/postgres.ts";
import { simulatedBoard } from "./helpers/script-project.ts";

test("a backup taken while devices write restores into a fresh directory: rows, env vars, deployments", async (t) => {
  const s = await startTestServer(t, { env });
  const f = await fleet(t, s);
  const load = loadDevices(f.loaded.map((l) => l.sim));
  t.after(() => load.stop());
  await waitUntil(
    async () => {
      for (const { device } of f.loaded)
        if ((await highestLogged(f.member.client, f.busy.id, device.id)) < 50) return false;
      return true;
    },
    60_000,
    "every load device has logged 50 lines",
  );

  // Acknowledged: rows the API has shown before the backup begins.
  const acknowledged = new Map<string, number>();
  for (const { device } of f.loaded)
    acknowledged.set(device.id, await highestLogged(f.member.client, f.busy.id, device.id));
  const archive = path.join(tempDir(t, "sdk-backup-"), "backup.tar.gz");
  const response = await download(s.url, f.admin.auth.token!.token, archive);
  assert.equal(response.status, 200);
  assert.match(
    response.headers.get("content-disposition") ?? "",
    /^attachment; filename="sdk-backup-.+\.tar\.gz"$/,
  );
  await waitUntil(
    async () => {
      for (const { device } of f.loaded)
        if ((await highestLogged(f.member.client, f.busy.id, device.id)) > acknowledged.get(device.id)!)
          return true;
      return false;
    },
    60_000,
    "the devices kept writing through the backup",
  );
  load.stop();

  const manifest = await readArchive(archive);
  assert.equal(manifest.dialect, "sqlite");
  assert.deepEqual(
    manifest.files.map((file) => file.path).filter((p) => !p.startsWith("projects/")),
    ["sdk.db", "secret.key"],
  );
  assert.ok(
    !manifest.files.some((file) => file.path.startsWith("projects/")),
    "bundles are in the database, not in files",
  );

  const restored = path.join(tempDir(t, "sdk-restore-"), "data");
  const result = await restore(t, [archive, "--data-dir", restored]);
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stdout, /Restored .* into .*\n.*files verified/);

  // Every acknowledged log line is in the restored database, with none missing before it.
  const db = new DatabaseSync(path.join(restored, "sdk.db"), { readOnly: true });
  for (const [deviceId, highest] of acknowledged) {
    const rows = db
      .prepare("select message from device_logs where device_id = ? and message like 'n=%'")
      .all(deviceId) as Array<{ message: string }>;
    const numbers = new Set(rows.map((r) => Number(r.message.slice(2))));
    for (let n = 0; n <= highest; n++)
      assert.ok(numbers.has(n), `${deviceId}: n=${n} (of ${highest}) restored`);
    const state = db
      .prepare("select count(*) as c from device_state_history where device_id = ? and entity_id = 'counter'")
      .get(deviceId) as { c: number };
    assert.ok(state.c > highest, `${deviceId}: the state history holds at least ${highest + 1} values`);
  }
  assert.ok(
    db.prepare("select bundle from deployment_bundles where deployment_id = ?").get(f.deployment.id),
    "the deployment's bundle is in the restored database",
  );
  db.close();

  const proc = await startServerProcess(t, restored, env);
  const admin = proc.client(f.admin.auth.token!.token);
  const member = proc.client(f.member.auth.token!.token);
  assert.deepEqual((await admin.api.listUsers()).map((u) => u.email).sort(), [
    "admin@example.com",
    "member@example.com",
  ]);
  assert.deepEqual((await member.api.listProjects()).map((p) => p.name).sort(), ["busy", "greenhouse"]);
  assert.deepEqual(
    (await member.api.listEnvVars({ params: { projectId: f.project.id } })).map((v) => [v.name, v.value]),
    [["GREETING", "hello from before the backup"]],
    "the env var decrypts with the restored key",
  );
  const live = (await member.api.listDeployments({ params: { projectId: f.project.id } })).find(
    (d) => d.status === "active",
  );
  assert.equal(live?.id, f.deployment.id);
  // The deployment runs: a board connecting to the restored server is greeted by the script.
  const sim = simulatedBoard(t, new URL(proc.url).host, f.runner.credentials);
  sim.start();
  await sim.waitFor("connected");
  await waitUntil(
    async () =>
      (
        await member.api.listDeviceLogs({ params: { projectId: f.project.id, deviceId: f.runner.device.id } })
      ).some((l) => l.message === "greeting=hello from before the backup"),
    30_000,
    "the restored deployment's script greets the device",
  );
});

test("a member cannot download a backup; the admin's download is in the audit log", async (t) => {
  const s = await startTestServer(t);
  const admin = await s.user();
  const member = await s.user();
  await assert.rejects(member.client.api.downloadBackup(), (error: unknown) => {
    assert.ok(error instanceof SdkApiError);
    assert.equal(error.status, 403);
    assert.equal(error.code, "forbidden");
    return true;
  });
  const anonymous = await fetch(`${s.url}/v1/admin/backup`);
  assert.equal(anonymous.status, 401);
  await anonymous.arrayBuffer();
  const bytes = await admin.client.api.downloadBackup();
  assert.ok(bytes instanceof Uint8Array && bytes.length > 0);
  const entry = (await admin.client.api.listAudit()).find((a) => a.action === "backup.downloaded");
  assert.equal(entry?.actorId, admin.auth.user.id);
  assert.deepEqual(fs.readdirSync(path.join(s.dataDir, "backups")), [], "no staging left behind");
});

test("scheduled backups are written into DATA_DIR/backups/ and only the newest BACKUP_KEEP are kept", async (t) => {
  const lines: Array<{ msg?: string; file?: string; removed?: string[] }> = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split("\n")) if (line) lines.push(JSON.parse(line));
      done();
    },
  });
  // 0.0003 h ≈ 1 s between backups.
  const s = await startTestServer(t, {
    env: { BACKUP_INTERVAL_HOURS: "0.0003", BACKUP_KEEP: "2" },
    logger: pino({ level: "info" }, sink),
  });
  const user = await s.user();
  const written = () => lines.filter((l) => l.msg?.startsWith("scheduled backup written"));
  await waitUntil(() => written().length >= 4, 60_000, "four scheduled backups");
  await s.server.close();
  const dir = path.join(s.dataDir, "backups");
  const names = fs.readdirSync(dir).sort();
  const last = written().map((l) => path.basename(l.file!));
  assert.deepEqual(names, last.slice(-2), "the two newest are kept, nothing else is left");
  assert.ok(
    written().some((l) => (l.removed ?? []).length > 0),
    "older ones were removed",
  );
  const manifest = await readArchive(path.join(dir, names[1]!));
  assert.deepEqual(manifest.files.map((f) => f.path).sort(), ["sdk.db", "secret.key"]);

  // The container's way: restore a scheduled backup from the volume into the same volume.
  const inPlace = await restore(t, [path.join(dir, names[1]!), "--force"], { DATA_DIR: s.dataDir });
  assert.equal(inPlace.code, 0, inPlace.stderr);
  assert.match(inPlace.stdout, /replaced: .*sdk\.db/);
  assert.deepEqual(fs.readdirSync(dir).sort(), names, "the scheduled backups are kept");
  assert.deepEqual(fs.readdirSync(s.dataDir).sort(), ["backups", "sdk.db", "secret.key"]);
  const proc = await startServerProcess(t, s.dataDir);
  assert.equal((await proc.client(user.auth.token!.token).api.whoami()).email, user.auth.user.email);
});

test("with PostgreSQL the archive holds everything but the database, and says to use pg_dump", async (t) => {
  const url = await postgresUrl(t);
  if (!url) return;
  const s = await startTestServer(t, { env: { DATABASE_URL: url } });
  const admin = await s.user();
  const project = await admin.client.api.createProject({ body: { name: "p" } });
  await deployScript(t, admin.client, project.id, script);
  const dir = tempDir(t, "sdk-backup-");
  const archive = path.join(dir, "pg.tar.gz");
  await download(s.url, admin.auth.token!.token, archive);
  const manifest = await readArchive(archive);
  assert.equal(manifest.dialect, "postgres");
  assert.equal(manifest.database, null);
  assert.match(manifest.note ?? "", /pg_dump/);
  assert.ok(!manifest.files.some((f) => f.path.startsWith("sdk.db")));
  assert.ok(manifest.files.some((f) => f.path === "secret.key"));
  assert.ok(
    !manifest.files.some((f) => f.path.endsWith("/script.js")),
    "bundles are in the database (pg_dump), not in files",
  );

  const restored = path.join(dir, "data");
  const result = await restore(t, [archive, "--data-dir", restored]);
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stdout, /PostgreSQL and not in the archive: restore it from your pg_dump/);
  assert.equal(fs.existsSync(path.join(restored, "secret.key")), true);
});

test("the archive keeps what matters and leaves out backups, the live database files and temp files", async (t) => {
  const dataDir = tempDir(t, "sdk-data-");
  const write = (file: string, text: string) => {
    fs.mkdirSync(path.dirname(path.join(dataDir, file)), { recursive: true });
    fs.writeFileSync(path.join(dataDir, file), text);
  };
  const long = `projects/${"p".repeat(60)}/deployments/${"d".repeat(60)}/${"f".repeat(90)}.js`;
  write("secret.key", "key");
  write(long, "a path longer than 100 bytes");
  write("firmware/1.0.0/pico_w.uf2", "uf2");
  write("sdk.db", "live");
  write("sdk.db-wal", "wal");
  write("sdk.db-shm", "shm");
  write("backups/sdk-backup-old.tar.gz", "an older backup");
  write("projects/x/deployments/dep.tmp/script.js", "half a deployment");
  write("firmware/1.0.0/pico2_w.uf2.tmp", "half a firmware");
  write(".write-check-123", "sdk");
  const prepared = await prepareBackup({
    dataDir,
    dialect: "sqlite",
    serverVersion: "9.9.9",
    now: new Date("2026-11-24T03:00:00Z"),
    snapshotDatabase: async (dest) => fs.writeFileSync(dest, "snapshot"),
  });
  const file = path.join(tempDir(t, "sdk-backup-"), "a.tar.gz");
  await writeArchive(prepared, file);
  const manifest = await readArchive(file);
  assert.deepEqual(
    manifest.files.map((f) => f.path),
    ["sdk.db", "firmware/1.0.0/pico_w.uf2", long, "secret.key"],
  );
  assert.equal(manifest.serverVersion, "9.9.9");
  assert.equal(manifest.createdAt, "2026-11-24T03:00:00.000Z");
  const target = path.join(tempDir(t, "sdk-restore-"), "data");
  const result = await restore(t, [file, "--data-dir", target]);
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stdout, /warning: the backup comes from sdk-server 9\.9\.9, newer than this one/);
  assert.equal(fs.readFileSync(path.join(target, "sdk.db"), "utf8"), "snapshot");
  assert.equal(fs.readFileSync(path.join(target, long), "utf8"), "a path longer than 100 bytes");
  assert.deepEqual(
    fs.readdirSync(path.join(dataDir, "backups")),
    ["sdk-backup-old.tar.gz"],
    "no staging left",
  );
});

test("one backup at a time: a second is refused with backup_in_progress until the first has been read", async (t) => {
  const s = await startTestServer(t);
  const admin = await s.user();
  const principal = { user: { id: admin.auth.user.id } } as Parameters<
    typeof s.server.services.backups.download
  >[0];
  const first = await s.server.services.backups.download(principal);
  const refused = await fetch(`${s.url}/v1/admin/backup`, {
    headers: { authorization: `Bearer ${admin.auth.token!.token}` },
  });
  assert.equal(refused.status, 409);
  assert.equal(((await refused.json()) as { error: { code: string } }).error.code, "backup_in_progress");
  first.stream.resume(); // read to the end: the next one may start
  await new Promise((resolve) => first.stream.once("close", resolve));
  const archive = path.join(tempDir(t, "sdk-backup-"), "b.tar.gz");
  assert.equal((await download(s.url, admin.auth.token!.token, archive)).status, 200);

  // A download the client walks away from halfway ends the backup too: staging gone, the next one runs.
  fs.mkdirSync(path.join(s.dataDir, "projects", "big"), { recursive: true });
  fs.writeFileSync(path.join(s.dataDir, "projects", "big", "blob.bin"), randomBytes(32 * 1024 * 1024));
  await new Promise<void>((resolve, reject) => {
    const request = http.get(
      `${s.url}/v1/admin/backup`,
      { headers: { authorization: `Bearer ${admin.auth.token!.token}` } },
      (response) => {
        assert.equal(response.statusCode, 200);
        response.once("data", () => {
          request.destroy(); // the client goes away, its socket with it
          resolve();
        });
      },
    );
    request.once("error", reject);
  });
  await waitUntil(
    () => fs.readdirSync(path.join(s.dataDir, "backups")).length === 0,
    30_000,
    "the staging dir removed",
  );
  await waitUntil(
    async () => {
      const stop = new AbortController();
      const again = await fetch(`${s.url}/v1/admin/backup`, {
        headers: { authorization: `Bearer ${admin.auth.token!.token}` },
        signal: stop.signal,
      });
      stop.abort(); // the connection goes with it: nothing left for the server's close to wait for
      return again.status === 200;
    },
    30_000,
    "another backup to be allowed",
  );
});

test("no room for a backup: the download is refused with insufficient_storage, a scheduled one skipped", async (t) => {
  const probe = spawnSync("unshare", ["-m", "sh", "-c", "mount -t tmpfs tmpfs /mnt"], { encoding: "utf8" });
  if (probe.status !== 0) return t.skip("needs unshare -m and mount (root) for a small tmpfs");
  const mount = tempDir(t, "sdk-small-");
  const port = await freePort();
  const server = spawnNode(t, {
    args: [mainScript],
    env: serverEnv(port, path.join(mount, "data"), { BACKUP_INTERVAL_HOURS: "0.0003" }),
    via: ["unshare", "-m", "sh", "-c", 'mount -t tmpfs -o size=32m tmpfs "$0" && exec "$@"', mount],
  });
  await server.waitForOutput(({ stdout }) => stdout.includes("listening on"), 30_000, "the server to listen");
  const client = new SdkClient({ baseUrl: `http://127.0.0.1:${port}` });
  const auth = await client.api.register({
    body: { email: "admin@example.com", password: "a long enough password", issueToken: true },
  });
  const response = await fetch(`http://127.0.0.1:${port}/v1/admin/backup`, {
    headers: { authorization: `Bearer ${auth.token!.token}` },
  });
  assert.equal(response.status, 507);
  const body = (await response.json()) as { error: { code: string; message: string } };
  assert.equal(body.error.code, "insufficient_storage");
  assert.match(
    body.error.message,
    /Not enough free space in .* for a backup: [\d.]+ MB free, [\d.]+ MB needed/,
  );
  await server.waitForOutput(
    ({ stdout }) => stdout.includes("scheduled backup skipped: Not enough free space"),
    60_000,
    "a scheduled backup skipped",
  );
});

test("symbolic links: a link to a file is backed up as the file, one to a directory fails loudly; lost+found is ignored", async (t) => {
  const dataDir = tempDir(t, "sdk-data-");
  const elsewhere = tempDir(t, "sdk-elsewhere-");
  fs.writeFileSync(path.join(elsewhere, "key"), "the key");
  fs.symlinkSync(path.join(elsewhere, "key"), path.join(dataDir, "secret.key"));
  fs.mkdirSync(path.join(dataDir, "lost+found"));
  fs.writeFileSync(path.join(dataDir, "lost+found", "#123"), "fsck's");
  const source = {
    dataDir,
    dialect: "sqlite" as const,
    serverVersion: "0.1.0",
    now: new Date("2026-11-24T03:00:00Z"),
    snapshotDatabase: async (dest: string) => fs.writeFileSync(dest, "snapshot"),
  };
  const file = path.join(elsewhere, "a.tar.gz");
  await writeArchive(await prepareBackup(source), file);
  const manifest = await readArchive(file);
  assert.deepEqual(
    manifest.files.map((f) => [f.path, f.size]),
    [
      ["sdk.db", 8],
      ["secret.key", 7],
    ],
  );
  fs.symlinkSync(elsewhere, path.join(dataDir, "projects"));
  await assert.rejects(
    prepareBackup(source),
    /symbolic link a backup cannot follow: projects \(to a directory\)/,
  );

  // A data directory holding only lost+found (a mount point) counts as empty.
  const mounted = tempDir(t, "sdk-mount-");
  fs.mkdirSync(path.join(mounted, "lost+found"));
  const restored = await restore(t, [file, "--data-dir", mounted]);
  assert.equal(restored.code, 0, restored.stderr);
  assert.equal(fs.readFileSync(path.join(mounted, "secret.key"), "utf8"), "the key");
  assert.ok(fs.existsSync(path.join(mounted, "lost+found")));
});

test("a backup that cannot be written closes and removes its staged copy; the next one works", async (t) => {
  if (!fs.existsSync("/proc/self/fd")) return t.skip("needs /proc/self/fd (Linux)");
  const dataDir = tempDir(t, "sdk-data-");
  fs.writeFileSync(path.join(dataDir, "secret.key"), "key");
  const source = {
    dataDir,
    dialect: "sqlite" as const,
    serverVersion: "1.0.0",
    now: new Date("2026-11-24T03:00:00Z"),
    // Incompressible and larger than every stream buffer: the archive is mid-file when the write fails.
    snapshotDatabase: async (dest: string) => fs.writeFileSync(dest, randomBytes(8 * 1024 * 1024)),
  };
  const out = tempDir(t, "sdk-backup-");
  await assert.rejects(
    writeArchive(await prepareBackup(source), path.join(out, "no-such-dir", "a.tar.gz")),
    /ENOENT/,
  );
  await waitUntil(() => openFiles(".staging-").length === 0, 30_000, "the staged database closed");
  assert.deepEqual(fs.readdirSync(path.join(dataDir, "backups")), [], "the staging dir is removed");
  const file = path.join(out, "a.tar.gz");
  await writeArchive(await prepareBackup(source), file);
  assert.deepEqual(
    (await readArchive(file)).files.map((f) => f.path),
    ["sdk.db", "secret.key"],
  );
  assert.deepEqual(openFiles(".staging-"), []);
});

test("BACKUP_INTERVAL_HOURS takes decimals (0 turns scheduled backups off); BACKUP_KEEP a count", () => {
  assert.deepEqual(loadConfig({}).backup, { intervalMs: 24 * 3_600_000, keep: 7 });
  assert.deepEqual(loadConfig({ BACKUP_INTERVAL_HOURS: "0.5", BACKUP_KEEP: "3" }).backup, {
    intervalMs: 1_800_000,
    keep: 3,
  });
  assert.equal(loadConfig({ BACKUP_INTERVAL_HOURS: "0" }).backup.intervalMs, 0);
  assert.throws(
    () => loadConfig({ BACKUP_INTERVAL_HOURS: "-1" }),
    /BACKUP_INTERVAL_HOURS must be a number of hours/,
  );
  assert.throws(() => loadConfig({ BACKUP_KEEP: "0" }), /BACKUP_KEEP must be a whole number from 1 to 1000/);
});
