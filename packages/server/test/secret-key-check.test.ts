// The secret key's check value in the database: a server (or cluster instance) with a key file
// that is not the one the database's secrets were written with refuses to start.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { DatabaseSync } from "node:sqlite";
import { test } from "node:test";
import { natsCluster } from "./helpers/nats.ts";
import { postgresUrl } from "./helpers/postgres.ts";
import { createTestServer, startTestServer, tempDir } from "./helpers/server.ts";

const newKey = () => randomBytes(32).toString("base64");

/** Runs SQL on a stopped server's SQLite database. */
function sqlite(dataDir: string, query: string): unknown[] {
  const db = new DatabaseSync(path.join(dataDir, "sdk.db"));
  try {
    return db.prepare(query).all();
  } finally {
    db.close();
  }
}

test("one server: a swapped secret.key is refused at boot; the right one starts and reads the env vars", async (t) => {
  const dataDir = tempDir(t);
  const first = await startTestServer(t, { dataDir });
  const { client } = await first.user();
  const project = await client.api.createProject({ body: { name: "p" } });
  const params = { projectId: project.id, name: "TOKEN" };
  await client.api.setEnvVar({ params, body: { value: "s3cret" } });
  await first.server.close();
  const keyFile = path.join(dataDir, "secret.key");
  const key = fs.readFileSync(keyFile);
  const [row] = sqlite(dataDir, "select value from key_check") as { value: string }[];
  assert.match(row!.value, /^v1:/);
  assert.equal(row!.value.includes(key.toString("utf8").trim()), false, "the check value is not the key");

  fs.writeFileSync(keyFile, newKey());
  await assert.rejects(
    createTestServer(t, { dataDir }),
    (e: Error) =>
      e.message.startsWith(
        `SECRET_KEY_FILE (${keyFile}) does not hold the key this database's secrets were written with`,
      ) && /put back the key file that belongs to this database/.test(e.message),
  );
  fs.writeFileSync(keyFile, key);
  const again = await startTestServer(t, { dataDir });
  const [envVar] = await again.client(client.token).api.listEnvVars({ params: { projectId: project.id } });
  assert.equal(envVar!.value, "s3cret");
});

test("one server with nothing encrypted yet: a lost secret.key is replaced and the check value follows it", async (t) => {
  const dataDir = tempDir(t);
  const first = await createTestServer(t, { dataDir });
  await first.close();
  const keyFile = path.join(dataDir, "secret.key");
  const before = sqlite(dataDir, "select value from key_check");
  fs.rmSync(keyFile);
  const second = await createTestServer(t, { dataDir });
  await second.close();
  assert.equal(fs.existsSync(keyFile), true, "a new key was made");
  const after = sqlite(dataDir, "select value from key_check");
  assert.equal(after.length, 1);
  assert.notDeepEqual(after, before);
});

test("a database from before the check value: written at boot once the key opens a stored value; a key that opens none is refused", async (t) => {
  const dataDir = tempDir(t);
  const first = await startTestServer(t, { dataDir });
  const { client } = await first.user();
  const project = await client.api.createProject({ body: { name: "p" } });
  await client.api.setEnvVar({ params: { projectId: project.id, name: "A" }, body: { value: "1" } });
  await first.server.close();
  sqlite(dataDir, "delete from key_check");
  const keyFile = path.join(dataDir, "secret.key");
  const key = fs.readFileSync(keyFile);

  fs.writeFileSync(keyFile, newKey());
  await assert.rejects(createTestServer(t, { dataDir }), /does not hold the key this database's secrets/);
  assert.deepEqual(sqlite(dataDir, "select value from key_check"), [], "nothing written for a wrong key");
  fs.writeFileSync(keyFile, key);
  const again = await createTestServer(t, { dataDir });
  await again.close();
  assert.equal(sqlite(dataDir, "select value from key_check").length, 1);
});

test("cluster: an instance with another SECRET_KEY_FILE is refused at boot, before it writes anything; the others carry on", async (t) => {
  const databaseUrl = await postgresUrl(t);
  if (!databaseUrl) return;
  const nats = await natsCluster(t);
  if (!nats) return;
  const keyFile = path.join(tempDir(t), "secret.key");
  fs.writeFileSync(keyFile, newKey());
  const otherKeyFile = path.join(tempDir(t), "other.key");
  fs.writeFileSync(otherKeyFile, newKey());
  const env = { DATABASE_URL: databaseUrl, NATS_URL: nats.natsUrl, CLUSTER_NAME: nats.clusterName };
  const a = await startTestServer(t, { env: { ...env, SECRET_KEY_FILE: keyFile, INSTANCE_ID: "i-a" } });

  // No env var yet: the check value A wrote at its boot is enough.
  await assert.rejects(
    createTestServer(t, { env: { ...env, SECRET_KEY_FILE: otherKeyFile, INSTANCE_ID: "i-b" } }),
    (e: Error) =>
      e.message ===
      `SECRET_KEY_FILE (${otherKeyFile}) does not hold the key this database's secrets were written with; every instance needs the same key file`,
  );
  const { client } = await a.user();
  const project = await client.api.createProject({ body: { name: "p" } });
  await client.api.setEnvVar({ params: { projectId: project.id, name: "A" }, body: { value: "1" } });
  await assert.rejects(
    createTestServer(t, { env: { ...env, SECRET_KEY_FILE: otherKeyFile, INSTANCE_ID: "i-c" } }),
    /every instance needs the same key file/,
  );
  // A copy of the same key joins, and reads what A wrote.
  const copy = path.join(tempDir(t), "copy.key");
  fs.copyFileSync(keyFile, copy);
  const b = await startTestServer(t, { env: { ...env, SECRET_KEY_FILE: copy, INSTANCE_ID: "i-b" } });
  const [envVar] = await b.client(client.token).api.listEnvVars({ params: { projectId: project.id } });
  assert.equal(envVar!.value, "1");
  assert.equal(
    (await a.client(client.token).api.listEnvVars({ params: { projectId: project.id } }))[0]!.value,
    "1",
  );
});
