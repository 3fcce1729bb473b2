import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { type TestContext, test } from "node:test";
import { fileURLToPath } from "node:url";
import {
  freePort,
  runNode,
  serverEnv,
  spawnNode,
  startServerProcess,
  tempDir,
  waitUntil,
} from "@sdk/test-helpers";
import { simulatedBoard } from "./helpers/script-project.ts";

// A DATA_DIR the server cannot create or write stops it at once with one line saying why — on a
// real read-only filesystem (a tmpfs mounted in a mount namespace of the test's own), a
// real permission refusal and a file in the way. A full disk does not stop it: it passes by itself.

const mainScript = fileURLToPath(import.meta.resolve("@sdk/server/main"));
const fix = "or set DATA_DIR to a directory the server can write";

async function startWith(t: TestContext, dataDir: string, via?: string[]) {
  const result = await runNode(t, { args: [mainScript], env: serverEnv(0, dataDir), via, timeoutMs: 60_000 });
  assert.equal(result.code, 1, `exit code (stderr: ${result.stderr})`);
  assert.equal(result.stdout, "");
  const lines = result.stderr.split("\n").filter(Boolean);
  assert.equal(lines.length, 1, `one line: ${result.stderr}`);
  return lines[0]!;
}

/** Skips (failing under CI) unless this process may make mount namespaces and mount a tmpfs. */
function canMount(t: TestContext): boolean {
  const probe = spawnSync("unshare", ["-m", "sh", "-c", "mount -t tmpfs tmpfs /mnt"], { encoding: "utf8" });
  if (probe.status === 0) return true;
  const why = `unshare -m and mount are not allowed here (${(probe.error?.message ?? probe.stderr).trim()}); run as root to test a real read-only filesystem`;
  if (process.env.CI) assert.fail(why);
  t.skip(why);
  return false;
}

/** Runs the server in a new mount namespace where `dir` is a fresh tmpfs mounted with `options`. */
const onTmpfs = (dir: string, options: string, setup = "") => [
  "unshare",
  "-m",
  "sh",
  "-c",
  `mount -t tmpfs -o ${options} tmpfs "$0" && ${setup} exec "$@"`,
  dir,
];

test("DATA_DIR on a read-only filesystem: says so, whether DATA_DIR, its parent or an ancestor is missing", async (t) => {
  if (!canMount(t)) return;
  const mount = tempDir(t, "sdk-ro-");
  for (const dataDir of [mount, path.join(mount, "data"), path.join(mount, "a", "b", "data")]) {
    const line = await startWith(t, dataDir, onTmpfs(mount, "ro"));
    assert.match(line, new RegExp(`^sdk-server: DATA_DIR ${dataDir} is on a read-only filesystem`));
    assert.ok(line.endsWith(fix), line);
    assert.doesNotMatch(line, /ENOENT|mkdir|write-check/);
  }
});

/** Starts the server on a copy of `earlier` (a data dir) on a tmpfs filled to the last byte. */
async function bootOnFullDisk(t: TestContext, earlier: string) {
  const mount = tempDir(t, "sdk-full-");
  const port = await freePort();
  const server = spawnNode(t, {
    args: [mainScript],
    env: serverEnv(port, path.join(mount, "data")),
    via: onTmpfs(
      mount,
      "size=16m",
      `cp -a '${earlier}' "$0/data" && { head -c 32M /dev/zero > "$0/fill" 2>/dev/null; true; } &&`,
    ),
  });
  let exited = false;
  void server.exited.then(() => {
    exited = true;
  });
  const status = async (route: string) => {
    try {
      const res = await fetch(`http://127.0.0.1:${port}${route}`, { signal: AbortSignal.timeout(5_000) });
      await res.arrayBuffer();
      return res.status;
    } catch {
      return 0;
    }
  };
  await waitUntil(
    async () => exited || (await status("/health")) === 200,
    30_000,
    "the server to answer /health",
  );
  assert.ok(!exited, `the server stopped on a full disk: ${server.stderr()}`);
  assert.equal(await status("/ready"), 503, "not ready on a full disk");
  const warning = server
    .stdout()
    .split("\n")
    .find((l) => l.includes("is on a full filesystem"));
  assert.ok(warning, `a warning in the log: ${server.stdout()}`);
  assert.match(JSON.parse(warning).msg, /free some space.*starting anyway: \/ready answers 503/);
  // Freed from outside, through the server's own view of its mount namespace: ready again.
  fs.rmSync(`/proc/${server.pid}/root${mount}/fill`);
  await waitUntil(
    async () => (await status("/ready")) === 200,
    30_000,
    "/ready to answer 200 once space is freed",
  );
  return server;
}

test("DATA_DIR on a full filesystem: starts with a warning, /ready is 503 until space is freed", async (t) => {
  if (!canMount(t)) return;
  const earlier = path.join(tempDir(t, "sdk-full-src-"), "data");
  const first = await startServerProcess(t, earlier);
  assert.deepEqual(await first.stop("SIGTERM", 20_000), { code: 0, signal: null });
  const server = await bootOnFullDisk(t, earlier);
  assert.deepEqual(await server.stop("SIGTERM", 20_000), { code: 0, signal: null });
});

test("a full disk after a crash with a device online: the boot writes wait, the server starts", async (t) => {
  if (!canMount(t)) return;
  const earlier = path.join(tempDir(t, "sdk-full-src-"), "data");
  const first = await startServerProcess(t, earlier);
  const auth = await first
    .client()
    .api.register({ body: { email: "a@example.com", password: "correct horse battery", issueToken: true } });
  const api = first.client(auth.token!.token).api;
  const project = await api.createProject({ body: { name: "p" } });
  const { credentials } = await api.createDevice({
    params: { projectId: project.id },
    body: { name: "d", board: "pico_w" },
  });
  const sim = simulatedBoard(t, new URL(first.url).host, credentials);
  sim.start();
  await sim.waitFor("connected", 10_000);
  await first.stop("SIGKILL", 10_000); // the device stays online in the database
  const server = await bootOnFullDisk(t, earlier);
  assert.match(server.stdout(), /marking the devices offline skipped: the database cannot write now/);
  assert.deepEqual(await server.stop("SIGTERM", 20_000), { code: 0, signal: null });
});

test("DATA_DIR below a directory the server may not write: says whose permission is missing", async (t) => {
  const root = tempDir(t, "sdk-perm-");
  fs.chmodSync(root, 0o755);
  const locked = path.join(root, "locked");
  fs.mkdirSync(locked, { mode: 0o500 });
  // Root passes every permission check: as root, run the server as nobody instead.
  let via: string[] | undefined;
  let uid = process.getuid?.();
  if (uid === 0) {
    if (spawnSync("setpriv", ["--version"]).status !== 0) {
      const why = "running as root without setpriv: cannot run the server as another user";
      if (process.env.CI) assert.fail(why);
      return t.skip(why);
    }
    uid = 65534;
    via = ["setpriv", `--reuid=${uid}`, `--regid=${uid}`, "--clear-groups"];
  }
  for (const dataDir of [locked, path.join(locked, "data"), path.join(locked, "a", "data")]) {
    const line = await startWith(t, dataDir, via);
    const at = dataDir === locked ? "" : ` \\(at ${locked}\\)`;
    assert.match(
      line,
      new RegExp(
        `^sdk-server: DATA_DIR ${dataDir} is not writable by user ${uid}${at}: give it write permission`,
      ),
    );
  }
});

test("a file where DATA_DIR or one of its parents should be: names the file", async (t) => {
  const root = tempDir(t, "sdk-file-");
  const file = path.join(root, "file");
  fs.writeFileSync(file, "");
  for (const dataDir of [file, path.join(file, "data"), path.join(file, "a", "data")]) {
    const line = await startWith(t, dataDir);
    assert.equal(
      line,
      `sdk-server: DATA_DIR ${dataDir} cannot be a directory: ${file} is in the way and is not one; move it, ${fix}`,
    );
  }
  const dangling = path.join(root, "dangling");
  fs.symlinkSync(path.join(root, "nothing", "here"), dangling);
  assert.match(
    await startWith(t, path.join(dangling, "data")),
    /cannot be created: a part of its path \(at \S+dangling\) does not exist and cannot be made, perhaps a symbolic link to nothing: fix the path/,
  );
});
