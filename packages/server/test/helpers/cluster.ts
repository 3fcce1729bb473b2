// The set-up of a test cluster: instances started in this process (createServer each) on one
// PostgreSQL schema and one NATS cluster name, each with its own INSTANCE_ID and DATA_DIR.
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import type { TestContext } from "node:test";
import type { TestServerOptions } from "@sdk/test-helpers";
import { natsCluster } from "./nats.ts";
import { postgresUrl } from "./postgres.ts";
import { startTestServer, tempDir } from "./server.ts";

/**
 * The environment every instance of one test cluster shares: the database, NATS and its cluster
 * name, and one secret key file (written to the test's temporary directory).
 */
export function clusterEnvironment(
  t: TestContext,
  backends: { databaseUrl: string; natsUrl: string; clusterName: string },
  extra: Record<string, string> = {},
): Record<string, string> {
  const keyFile = path.join(tempDir(t), "secret.key");
  fs.writeFileSync(keyFile, randomBytes(32).toString("base64"));
  return {
    DATABASE_URL: backends.databaseUrl,
    NATS_URL: backends.natsUrl,
    CLUSTER_NAME: backends.clusterName,
    SECRET_KEY_FILE: keyFile,
    ...extra,
  };
}

/**
 * The environment of a test cluster on the tests' PostgreSQL (a schema of its own) and NATS (a
 * cluster name of its own), or null: the test is skipped (a failure in CI).
 */
export async function clusterEnv(
  t: TestContext,
  extra: Record<string, string> = {},
): Promise<Record<string, string> | null> {
  const databaseUrl = await postgresUrl(t);
  if (!databaseUrl) return null;
  const nats = await natsCluster(t);
  if (!nats) return null;
  return clusterEnvironment(t, { databaseUrl, ...nats }, extra);
}

/** Starts one instance of the cluster, with its INSTANCE_ID (and the server's other options). */
export const startInstance = (
  t: TestContext,
  env: Record<string, string>,
  id: string,
  options: Omit<TestServerOptions, "env"> = {},
) => startTestServer(t, { ...options, env: { ...env, INSTANCE_ID: id } });
