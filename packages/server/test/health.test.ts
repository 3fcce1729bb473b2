import assert from "node:assert/strict";
import path from "node:path";
import { DatabaseSync } from "node:sqlite";
import { test } from "node:test";
import { raw, startTestServer } from "./helpers/server.ts";

test("GET /health answers ok without the database", async (t) => {
  const { url, server } = await startTestServer(t);
  const res = await raw(`${url}/health`);
  assert.equal(res.status, 200);
  assert.deepEqual(res.body, { success: true, result: { status: "ok" } });
  await server.database.close(); // even with the database gone, liveness holds
  assert.equal((await raw(`${url}/health`)).status, 200);
});

test("GET /ready answers ready after a real write", async (t) => {
  const { url } = await startTestServer(t);
  const res = await raw(`${url}/ready`);
  assert.equal(res.status, 200);
  assert.equal(res.body.success, true);
  assert.equal(res.body.result.status, "ready");
  assert.equal(res.body.result.database, "sqlite");
});

test("GET /ready answers 503 while another process holds the database's write lock, and recovers", async (t) => {
  const { url, dataDir } = await startTestServer(t);
  const other = new DatabaseSync(path.join(dataDir, "sdk.db"));
  t.after(() => other.close());
  other.exec("BEGIN EXCLUSIVE");
  const res = await raw(`${url}/ready`);
  assert.equal(res.status, 503);
  assert.equal(res.body.success, false);
  assert.equal(res.body.error.code, "database_unavailable");
  assert.match(res.body.error.docs, /\/docs\/errors#database_unavailable$/);
  other.exec("ROLLBACK");
  assert.equal((await raw(`${url}/ready`)).status, 200);
});
