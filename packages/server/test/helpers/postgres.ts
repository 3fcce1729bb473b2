import { randomBytes } from "node:crypto";
import { after, type TestContext } from "node:test";
import pg from "pg";

const baseUrl = process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
let reachable: Promise<boolean> | undefined;

async function probe(): Promise<boolean> {
  const client = new pg.Client({ connectionString: baseUrl, connectionTimeoutMillis: 2_000 });
  try {
    await client.connect();
    await client.query("select 1");
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

/** The schemas this test file made: dropped once all its tests, and their servers, are done. */
const schemas: string[] = [];

// Not in each test's own `after`: those run in the order they were added, so the schema's would
// run before the servers the test started later were closed, and a server still writing could
// deadlock with the DROP.
after(async () => {
  if (schemas.length === 0) return;
  const cleanup = new pg.Client({ connectionString: baseUrl });
  await cleanup.connect();
  try {
    for (const schema of schemas.splice(0)) {
      for (let attempt = 1; ; attempt++) {
        try {
          await cleanup.query(`drop schema if exists ${schema} cascade`);
          break;
        } catch (error) {
          // 40P01: a process of the test still held a lock (deadlock detected): try again.
          if ((error as { code?: string }).code !== "40P01" || attempt === 5) throw error;
        }
      }
    }
  } finally {
    await cleanup.end();
  }
});

/**
 * A PostgreSQL URL whose search_path is a fresh schema, dropped when the test file ends. Where no
 * PostgreSQL answers, the test is skipped with a visible reason, except in CI, where it fails.
 */
export async function postgresUrl(t: TestContext): Promise<string | null> {
  reachable ??= probe();
  if (!(await reachable)) {
    if (process.env.CI) throw new Error(`PostgreSQL is required in CI but ${baseUrl} is not reachable`);
    t.skip(`PostgreSQL not reachable at ${baseUrl} (set TEST_DATABASE_URL to run these tests)`);
    return null;
  }
  const schema = `sdk_test_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: baseUrl });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  await admin.end();
  schemas.push(schema);
  const url = new URL(baseUrl);
  // No parallel query: a parallel worker of a query run right after the schema was made (the
  // migrator's introspection, on a busy machine) failed with `schema "sdk_test_…" does not exist`.
  url.searchParams.set("options", `-c search_path=${schema} -c max_parallel_workers_per_gather=0`);
  return url.toString();
}
