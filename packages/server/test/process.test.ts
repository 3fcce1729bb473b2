import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import {
  boundedFetch,
  freePort,
  type ServerProcess,
  serverEnv,
  spawnServer,
  startServerProcess as startServer,
  tempDir,
  waitUntil,
  within,
} from "@sdk/test-helpers";

// These tests run the real server process (`node packages/server/src/main.ts`) on real ports and
// real data directories, and stop it with real signals.

const password = "correct horse battery";

function fileMode(file: string): number {
  return fs.statSync(file).mode & 0o777;
}

function walSize(dataDir: string): number | null {
  const wal = path.join(dataDir, "sdk.db-wal");
  return fs.existsSync(wal) ? fs.statSync(wal).size : null;
}

async function registerFirstUser(proc: ServerProcess) {
  const auth = await proc
    .client()
    .api.register({ body: { email: "admin@example.com", password, issueToken: true } });
  assert.ok(auth.token, "register with issueToken:true returns a token");
  return { auth, token: auth.token.token, client: proc.client(auth.token.token) };
}

test("invalid configuration: exits 1 with one line on stderr naming the variable and what it accepts", async (t) => {
  const cases: Array<[name: string, value: string, allowed: RegExp]> = [
    ["PORT", "abc", /PORT must be a whole number from 0 to 65535 \(got "abc"\)/],
    ["PORT", "70000", /PORT must be a whole number from 0 to 65535 \(got "70000"\)/],
    ["ALLOW_REGISTRATION", "maybe", /ALLOW_REGISTRATION must be true or false \(got "maybe"\)/],
    [
      "LOG_LEVEL",
      "loud",
      /LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent \(got "loud"\)/,
    ],
    ["DATABASE_URL", "mysql://x", /DATABASE_URL must be a postgres:\/\/ URL, or unset for SQLite/],
    ["PUBLIC_URL", "ftp://x", /PUBLIC_URL must be an http:\/\/ or https:\/\/ URL \(got "ftp:\/\/x"\)/],
    ["RATE_LIMIT_MAX_ATTEMPTS", "0", /RATE_LIMIT_MAX_ATTEMPTS must be a whole number from 1 to 1000000/],
  ];
  const root = tempDir(t, "sdk-process-config-");
  const port = await freePort();
  await Promise.all(
    cases.map(async ([name, value, allowed], i) => {
      // A data dir that does not exist: a process that stops at its configuration must not create it.
      const dataDir = path.join(root, `data-${i}`);
      const proc = spawnServer(t, { env: serverEnv(port, dataDir, { [name]: value }), port, dataDir });
      const exit = await within(proc.exited, 15_000, `${name}=${value}`);
      const what = `${name}=${value} (stderr: ${JSON.stringify(proc.stderr())})`;
      assert.deepEqual(exit, { code: 1, signal: null }, what);
      const lines = proc.stderr().split("\n");
      assert.equal(lines.length, 2, `exactly one line on stderr for ${what}`);
      assert.equal(lines[1], "", `stderr ends with a newline for ${what}`);
      assert.match(lines[0]!, /^sdk-server: invalid configuration: /, what);
      assert.ok(lines[0]!.includes(name), `the line names ${name}: ${what}`);
      assert.match(lines[0]!, allowed, what);
      assert.equal(proc.stdout(), "", `nothing on stdout for ${what}`);
      assert.equal(fs.existsSync(dataDir), false, `${name}=${value} must not create DATA_DIR`);
    }),
  );
});

test("an unreachable database: exits 1 with one line naming DATABASE_URL's host, never its credentials", async (t) => {
  const port = await freePort();
  const dbPort = await freePort();
  const dataDir = tempDir(t, "sdk-process-db-");
  const env = serverEnv(port, dataDir, { DATABASE_URL: `postgres://sdk:hunter2@127.0.0.1:${dbPort}/sdk` });
  const proc = spawnServer(t, { env, port, dataDir });
  assert.deepEqual(await within(proc.exited, 15_000, "the server exits"), { code: 1, signal: null });
  const stderr = proc.stderr();
  assert.match(
    stderr,
    new RegExp(
      `^sdk-server: failed to start: cannot connect to PostgreSQL at 127\\.0\\.0\\.1:${dbPort}/sdk \\(DATABASE_URL\\): connect ECONNREFUSED 127\\.0\\.0\\.1:${dbPort}\n$`,
    ),
  );
  assert.equal(stderr.includes("hunter2"), false);
  assert.equal(proc.stdout().includes("hunter2"), false);
});

test("boot on an empty data dir: creates it, with sdk.db and a 0600 secret.key, and answers ready", async (t) => {
  const dataDir = path.join(tempDir(t, "sdk-process-boot-"), "not", "yet", "there");
  assert.equal(fs.existsSync(dataDir), false);
  const proc = await startServer(t, dataDir);
  const ready = await proc.client().ready();
  const readyMs = performance.now() - proc.startedAt;
  t.diagnostic(
    `spawn to /health ok: ${proc.bootMs.toFixed(0)}ms; spawn to /ready ready: ${readyMs.toFixed(0)}ms`,
  );
  assert.deepEqual(
    { status: ready.status, database: ready.database },
    { status: "ready", database: "sqlite" },
  );
  assert.ok(ready.databaseBytes > 0 && typeof ready.diskLow === "boolean");

  assert.ok(fs.statSync(dataDir).isDirectory(), "DATA_DIR was created");
  assert.ok(fs.statSync(path.join(dataDir, "sdk.db")).isFile(), "sdk.db exists");
  const key = path.join(dataDir, "secret.key");
  assert.equal(fileMode(key).toString(8), "600", "secret.key is readable by its owner only");
  assert.equal(Buffer.from(fs.readFileSync(key, "utf8").trim(), "base64").length, 32);

  const listening = proc.logs().find((l) => /^sdk server .* listening on /.test(l.msg ?? ""));
  assert.ok(listening, `a "listening" log line on stdout:\n${proc.stdout()}`);
  assert.equal(listening.msg, `sdk server ${listening.version} listening on ${proc.url}`);
  assert.equal(listening.dataDir, dataDir);
  assert.equal(listening.database, "sqlite");
  assert.equal(listening.location, path.join(dataDir, "sdk.db"));
  assert.equal(proc.stderr(), "");
});

test("boot on an empty data dir: sdk.db (and its -wal/-shm) are 0600 like secret.key, DATA_DIR 0700", async (t) => {
  const dataDir = path.join(tempDir(t, "sdk-process-mode-"), "data");
  const proc = await startServer(t, dataDir);
  await proc.client().ready();
  const modes = Object.fromEntries(
    ["sdk.db", "sdk.db-wal", "sdk.db-shm", "secret.key"]
      .filter((f) => fs.existsSync(path.join(dataDir, f)))
      .map((f) => [f, fileMode(path.join(dataDir, f)).toString(8)]),
  );
  t.diagnostic(`file modes: ${JSON.stringify(modes)}`);
  for (const [file, mode] of Object.entries(modes)) assert.equal(mode, "600", `${file} mode`);
  assert.equal(fileMode(dataDir).toString(8), "700", "DATA_DIR mode");
});

for (const signal of ["SIGTERM", "SIGINT"] as const) {
  test(`graceful shutdown on ${signal}: exit 0, "stopped cleanly", WAL checkpointed`, async (t) => {
    const dataDir = path.join(tempDir(t, "sdk-process-stop-"), "data");
    const proc = await startServer(t, dataDir);
    const { client } = await registerFirstUser(proc);
    await client.api.createProject({ body: { name: "before shutdown" } });
    assert.equal((await proc.client().ready()).status, "ready");
    const walBefore = walSize(dataDir);
    assert.ok(walBefore && walBefore > 0, `writes went to the WAL before ${signal} (size ${walBefore})`);

    const started = performance.now();
    const exit = await proc.stop(signal, 5_000);
    t.diagnostic(`${signal} to exit: ${(performance.now() - started).toFixed(0)}ms`);
    assert.deepEqual(exit, { code: 0, signal: null }, `stderr: ${proc.stderr()}\nstdout: ${proc.stdout()}`);

    const messages = proc.logs().map((l) => l.msg);
    assert.ok(
      messages.includes(`${signal} received: finishing in-flight requests, then exiting`),
      String(messages),
    );
    assert.equal(messages.at(-1), "stopped cleanly", `the last log line:\n${proc.stdout()}`);
    assert.ok(
      proc.logs().every((l) => (l.level ?? 0) < 40),
      `no warning or error while stopping:\n${proc.stdout()}`,
    );
    assert.equal(proc.stderr(), "");
    const walAfter = walSize(dataDir);
    assert.ok(
      walAfter === null || walAfter === 0,
      `sdk.db-wal is absent or empty after close (size ${walAfter})`,
    );
  });
}

test("restart on the same data dir keeps users, tokens, projects, devices and env vars", async (t) => {
  const dataDir = path.join(tempDir(t, "sdk-process-restart-"), "data");
  const secretValue = `plaintext-canary-${randomBytes(12).toString("hex")}`;
  const projectName = `project-${randomBytes(6).toString("hex")}`;

  const first = await startServer(t, dataDir);
  const { auth, token, client } = await registerFirstUser(first);
  const project = await client.api.createProject({ body: { name: projectName } });
  const { device } = await client.api.createDevice({
    params: { projectId: project.id },
    body: { name: "kitchen", board: "pico2_w" },
  });
  const envVar = await client.api.setEnvVar({
    params: { projectId: project.id, name: "WIFI_PASSWORD" },
    body: { value: secretValue },
  });
  assert.equal(envVar.value, secretValue);
  const key = fs.readFileSync(path.join(dataDir, "secret.key"));
  assert.deepEqual(await first.stop("SIGTERM"), { code: 0, signal: null }, first.stderr());

  // After a clean stop everything is in sdk.db itself: the value is there only in sealed form.
  assert.equal(walSize(dataDir) ?? 0, 0);
  const bytes = fs.readFileSync(path.join(dataDir, "sdk.db"));
  assert.ok(bytes.includes(projectName), "sanity: plain columns are visible in the file bytes");
  assert.equal(bytes.includes(secretValue), false, "the env var's plaintext value is not in sdk.db");
  assert.equal(bytes.includes(Buffer.from(secretValue).toString("base64")), false);

  const second = await startServer(t, dataDir);
  assert.notEqual(second.pid, first.pid);
  const again = second.client(token);
  assert.equal((await second.client().ready()).status, "ready");
  assert.deepEqual(await again.api.whoami(), auth.user);
  assert.equal((await second.client().api.serverInfo()).setupRequired, false);
  assert.deepEqual(await again.api.listProjects(), [project]);
  assert.deepEqual(await again.api.getProject({ params: { projectId: project.id } }), project);
  assert.deepEqual(await again.api.listDevices({ params: { projectId: project.id } }), [device]);
  const envVars = await again.api.listEnvVars({ params: { projectId: project.id } });
  assert.deepEqual(envVars, [envVar]);
  assert.equal(envVars[0]!.value, secretValue, "decrypted with the same secret.key");
  assert.deepEqual(fs.readFileSync(path.join(dataDir, "secret.key")), key, "secret.key is not replaced");
  // The password still works too.
  const login = await second.client().api.login({ body: { email: "admin@example.com", password } });
  assert.equal(login.user.id, auth.user.id);

  assert.deepEqual(await second.stop("SIGTERM"), { code: 0, signal: null }, second.stderr());
  assert.equal(fs.readFileSync(path.join(dataDir, "sdk.db")).includes(secretValue), false);
});

test("SIGKILL in the middle of a burst of writes loses no acknowledged write", async (t) => {
  const dataDir = path.join(tempDir(t, "sdk-process-crash-"), "data");
  const first = await startServer(t, dataDir);
  const { token } = await registerFirstUser(first);
  const post = (name: string) =>
    boundedFetch()(`${first.url}/v1/projects`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ name }),
    });

  const killAfter = 50;
  const workers = 8;
  const perWorker = 100; // bounded: at most 800 creates, far more than needed to reach the kill
  const acked: string[] = [];
  let inFlight = 0;
  let inFlightAtKill = -1;
  let failedAfterKill = 0;
  let killed = false;

  const worker = async (w: number) => {
    for (let i = 0; i < perWorker && !killed; i++) {
      inFlight++;
      try {
        const res = await post(`burst ${w}-${i}`);
        const body = (await res.json()) as { success: boolean; result?: { id?: string } };
        assert.equal(res.status, 201, JSON.stringify(body));
        assert.ok(body.success && typeof body.result?.id === "string", JSON.stringify(body));
        acked.push(body.result.id);
        if (acked.length >= killAfter && !killed) {
          killed = true;
          inFlightAtKill = inFlight - 1;
          first.child.kill("SIGKILL");
        }
      } catch (error) {
        if (!killed) throw error;
        failedAfterKill++;
      } finally {
        inFlight--;
      }
    }
  };
  await within(
    Promise.all(Array.from({ length: workers }, (_, w) => worker(w))),
    30_000,
    "the burst of writes",
  );
  assert.ok(killed, `the burst reached ${killAfter} acknowledged creates`);
  assert.deepEqual(await within(first.exited, 5_000, "SIGKILL"), { code: null, signal: "SIGKILL" });
  assert.equal(
    first.logs().some((l) => l.msg === "stopped cleanly"),
    false,
    "the first process did not get to shut down",
  );
  t.diagnostic(
    `acknowledged ${acked.length}; in flight at kill ${inFlightAtKill}; failed after kill ${failedAfterKill}; ` +
      `sdk.db-wal after kill: ${walSize(dataDir)} bytes`,
  );
  assert.ok(inFlightAtKill > 0, "more creates were in flight when the process was killed");

  const second = await startServer(t, dataDir);
  assert.equal((await second.client().ready()).status, "ready");
  const projects = await second.client(token).api.listProjects();
  const present = new Set(projects.map((p) => p.id));
  const lost = acked.filter((id) => !present.has(id));
  t.diagnostic(
    `after restart: ${projects.length} projects (${projects.length - acked.length} unacknowledged)`,
  );
  assert.deepEqual(lost, [], `every acknowledged project survives the crash (${acked.length} acknowledged)`);
  assert.equal(new Set(acked).size, acked.length);
});

test("a server started with an IPC channel (as sdk dev starts it) stops cleanly when its parent goes", async (t) => {
  const dataDir = tempDir(t, "sdk-process-ipc-");
  const port = await freePort();
  const child = spawn(process.execPath, [fileURLToPath(import.meta.resolve("@sdk/server/main"))], {
    env: { ...process.env, ...serverEnv(port, dataDir) },
    stdio: ["ignore", "ignore", "pipe", "ipc"],
  });
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const get = boundedFetch();
  await waitUntil(
    () =>
      get(`http://127.0.0.1:${port}/health`).then(
        (r) => r.ok,
        () => false,
      ),
    30_000,
    "the server to answer /health",
    50,
  );
  child.disconnect(); // what the parent's death does to the channel
  assert.equal(await within(exited, 15_000, "the server to stop"), 0);
});
