import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { createTestServer, startServerProcess, startTestServer, tempDir } from "@sdk/test-helpers";
import { readArchive } from "../src/storage/backup-archive.ts";
import { craftArchive, download, restore, snapshot } from "./helpers/backup.ts";

test("a corrupted or truncated archive is refused with a clear error and nothing is written", async (t) => {
  const s = await startTestServer(t);
  const admin = await s.user();
  const dir = tempDir(t, "sdk-backup-");
  const archive = path.join(dir, "good.tar.gz");
  assert.equal((await download(s.url, admin.auth.token!.token, archive)).status, 200);
  const bytes = fs.readFileSync(archive);

  const flipped = Buffer.from(bytes);
  flipped[Math.floor(flipped.length / 2)]! ^= 0xff;
  const damaged = {
    "flipped.tar.gz": flipped,
    "truncated.tar.gz": bytes.subarray(0, Math.floor(bytes.length * 0.6)),
    "garbage.tar.gz": Buffer.from("not an archive at all"),
  };
  for (const [name, content] of Object.entries(damaged)) {
    const file = path.join(dir, name);
    fs.writeFileSync(file, content);
    const fresh = path.join(dir, `target-${name}`);
    const absent = await restore(t, [file, "--data-dir", fresh]);
    assert.equal(absent.code, 1, `${name}: ${absent.stdout}`);
    assert.match(
      absent.stderr,
      /sdk-server restore: .*(corrupted|truncated|not gzip|not an sdk backup).*nothing was written/,
    );
    assert.equal(fs.existsSync(fresh), false, `${name}: the data directory was not created`);

    fs.mkdirSync(fresh);
    const empty = await restore(t, [file, "--force"], { DATA_DIR: fresh });
    assert.equal(empty.code, 1, `${name}: ${empty.stdout}`);
    assert.deepEqual(fs.readdirSync(fresh), [], `${name}: the empty data directory stays empty`);
  }
  const truncated = await restore(t, [path.join(dir, "truncated.tar.gz"), "--data-dir", path.join(dir, "t")]);
  assert.match(truncated.stderr, /truncated/);

  // A data directory in use is left exactly as it was.
  const before = snapshot(s.dataDir);
  const onLive = await restore(t, [path.join(dir, "flipped.tar.gz"), "--data-dir", s.dataDir, "--force"]);
  assert.equal(onLive.code, 1);
  assert.deepEqual(snapshot(s.dataDir), before);
});

test("restore refuses a non-empty directory without --force; with it, replaces the contents and keeps backups/", async (t) => {
  const s = await startTestServer(t);
  const admin = await s.user("first@example.com");
  const archive = path.join(tempDir(t, "sdk-backup-"), "b.tar.gz");
  assert.equal((await download(s.url, admin.auth.token!.token, archive)).status, 200);

  const target = tempDir(t, "sdk-restore-");
  fs.writeFileSync(path.join(target, "sdk.db"), "an older database");
  fs.writeFileSync(path.join(target, "sdk.db-wal"), "its write-ahead log");
  fs.mkdirSync(path.join(target, "backups"));
  fs.writeFileSync(path.join(target, "backups", "keep-me.tar.gz"), "a scheduled backup");

  const refused = await restore(t, [archive, "--data-dir", target]);
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /is not empty \(it holds sdk\.db, sdk\.db-wal\).*--force/);
  assert.equal(fs.readFileSync(path.join(target, "sdk.db"), "utf8"), "an older database");

  const forced = await restore(t, [archive, "--data-dir", target, "--force"]);
  assert.equal(forced.code, 0, forced.stderr);
  assert.match(forced.stdout, /replaced: sdk\.db, sdk\.db-wal/);
  assert.deepEqual(fs.readdirSync(target).sort(), ["backups", "sdk.db", "secret.key"]);
  assert.equal(fs.readFileSync(path.join(target, "backups", "keep-me.tar.gz"), "utf8"), "a scheduled backup");
  const proc = await startServerProcess(t, target);
  assert.equal((await proc.client(admin.auth.token!.token).api.listUsers())[0]?.email, "first@example.com");

  const usage = await restore(t, []);
  assert.equal(usage.code, 2);
  assert.match(usage.stderr, /Usage: sdk-server restore ARCHIVE \[--data-dir DIR\] \[--force\]/);
});

test("a restore into the data directory of a running server is refused, --force or not; a second server too", async (t) => {
  const s = await startTestServer(t);
  const admin = await s.user();
  const archive = path.join(tempDir(t, "sdk-backup-"), "b.tar.gz");
  await download(s.url, admin.auth.token!.token, archive);
  const proc = await startServerProcess(t);
  const before = snapshot(proc.dataDir);
  for (const force of [[], ["--force"]]) {
    const refused = await restore(t, [archive, "--data-dir", proc.dataDir, ...force]);
    assert.equal(refused.code, 1, refused.stdout);
    assert.match(
      refused.stderr,
      new RegExp(`in use by an sdk-server \\(PID ${proc.pid} on .*\\): stop it first.*nothing was written`),
    );
  }
  assert.deepEqual(snapshot(proc.dataDir), before, "the running server's data is untouched");
  await assert.rejects(
    createTestServer(t, { dataDir: proc.dataDir }),
    new RegExp(`DATA_DIR .* is in use by an sdk-server \\(PID ${proc.pid}`),
  );

  // Stopped, it lets go; a lock left by a killed process is taken over.
  assert.equal((await proc.stop("SIGTERM")).code, 0);
  assert.equal(fs.existsSync(path.join(proc.dataDir, ".lock")), false);
  fs.writeFileSync(
    path.join(proc.dataDir, ".lock"),
    JSON.stringify({ pid: 2 ** 22 + 7, hostname: os.hostname() }),
  );
  const forced = await restore(t, [archive, "--data-dir", proc.dataDir, "--force"]);
  assert.equal(forced.code, 0, forced.stderr);
  assert.equal(fs.existsSync(path.join(proc.dataDir, ".lock")), false);
});

test("a restore cut off midway: the server refuses to start; running the restore again finishes it", async (t) => {
  const s = await startTestServer(t);
  const first = await s.user("first@example.com");
  const dir = tempDir(t, "sdk-backup-");
  const older = path.join(dir, "older.tar.gz");
  await download(s.url, first.auth.token!.token, older);
  const second = await s.user("second@example.com");
  const newer = path.join(dir, "newer.tar.gz");
  await download(s.url, first.auth.token!.token, newer);

  const target = path.join(dir, "data");
  assert.equal((await restore(t, [older, "--data-dir", target])).code, 0);
  // What a power cut in the middle of the swap leaves: the newer backup extracted and journalled,
  // the old sdk.db already moved aside, the old secret.key not yet.
  const id = "123-abcd";
  const staging = path.join(target, `.restoring-${id}`);
  fs.mkdirSync(staging);
  await readArchive(newer, staging);
  fs.mkdirSync(path.join(target, `.replaced-${id}`));
  fs.renameSync(path.join(target, "sdk.db"), path.join(target, `.replaced-${id}`, "sdk.db"));
  fs.writeFileSync(
    path.join(target, ".restore-journal"),
    JSON.stringify({ id, replaced: ["sdk.db", "secret.key"], incoming: ["sdk.db", "secret.key"] }),
  );
  await assert.rejects(
    createTestServer(t, { dataDir: target }),
    /holds an interrupted restore \(\.replaced-123-abcd, \.restore-journal, \.restoring-123-abcd\): run the same `sdk-server restore ARCHIVE --data-dir .* --force` again/,
  );
  const again = await restore(t, [newer, "--data-dir", target, "--force"]);
  assert.equal(again.code, 0, again.stderr);
  assert.match(again.stdout, /Finished a restore into .* that had been cut off/);
  assert.deepEqual(fs.readdirSync(target).sort(), ["sdk.db", "secret.key"]);
  const proc = await startServerProcess(t, target);
  assert.equal((await proc.client(second.auth.token!.token).api.whoami()).email, "second@example.com");
  await proc.stop("SIGTERM");

  // Cut off before its swap: the directory is whole, the leftovers go.
  fs.mkdirSync(path.join(target, ".restoring-9-ffff"));
  fs.writeFileSync(path.join(target, ".restoring-9-ffff", "sdk.db"), "half");
  await assert.rejects(createTestServer(t, { dataDir: target }), /holds an interrupted restore/);
  const cleaned = await restore(t, [newer, "--data-dir", target]);
  assert.equal(cleaned.code, 1);
  assert.match(cleaned.stderr, /the leftovers of an interrupted restore were removed first; .* is not empty/);
  assert.deepEqual(
    fs
      .readdirSync(target)
      .filter((n) => !/-(wal|shm)$/.test(n))
      .sort(),
    ["sdk.db", "secret.key"],
  );
});

test("a database with encrypted values and no secret.key: the server refuses to start rather than make a new key", async (t) => {
  const dataDir = tempDir(t, "sdk-data-");
  const s = await startTestServer(t, { dataDir });
  const admin = await s.user();
  const project = await admin.client.api.createProject({ body: { name: "p" } });
  await admin.client.api.setEnvVar({
    params: { projectId: project.id, name: "GREETING" },
    body: { value: "hello" },
  });
  await s.server.close();
  fs.rmSync(path.join(dataDir, "secret.key"));
  await assert.rejects(
    createTestServer(t, { dataDir }),
    /secret\.key is missing but the database holds values encrypted with it/,
  );
  assert.equal(fs.existsSync(path.join(dataDir, "secret.key")), false, "no new key was made");
});

test("an archive that cannot be read is refused with what the filesystem said, and nothing is written", async (t) => {
  const dir = tempDir(t, "sdk-backup-");
  await assert.rejects(readArchive(dir), /^ArchiveError: the archive cannot be read: EISDIR/);
  if (!fs.existsSync("/proc/self/mem")) return;
  // A regular file whose first read fails (EIO): the restore ends with a message, not a crash.
  const target = path.join(dir, "data");
  const result = await restore(t, ["/proc/self/mem", "--data-dir", target]);
  assert.equal(result.code, 1, result.stdout);
  assert.match(
    result.stderr,
    /^sdk-server restore: \/proc\/self\/mem: the archive cannot be read: .*; nothing was written\n$/,
  );
  assert.equal(fs.existsSync(target), false);
});

test("an archive naming paths a restore must not write (backups/, WAL files, staging dirs, the lock) is refused", async (t) => {
  const dir = tempDir(t, "sdk-backup-");
  const base = { "sdk.db": "db", "secret.key": "key" };
  for (const bad of [
    "backups/sdk-backup-x.tar.gz",
    "sdk.db-wal",
    "sdk.db-shm",
    ".restoring-1-aa/sdk.db",
    ".replaced-1-aa/sdk.db",
    ".lock",
    ".restore-journal",
    "lost+found/x",
  ]) {
    const file = path.join(dir, "bad.tar.gz");
    fs.writeFileSync(file, craftArchive({ ...base, [bad]: "x" }));
    await assert.rejects(readArchive(file), new RegExp(`unsafe path: ${bad.replace(/[.+]/g, "\\$&")}`));
  }
  // Without secret.key it restores, with a warning.
  const file = path.join(dir, "nokey.tar.gz");
  fs.writeFileSync(file, craftArchive({ "sdk.db": "db" }));
  const result = await restore(t, [file, "--data-dir", path.join(dir, "data")]);
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stdout, /warning: the archive holds no secret\.key/);
});
