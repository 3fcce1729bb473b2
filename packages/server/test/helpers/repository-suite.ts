import type { TestContext } from "node:test";
import { describe } from "node:test";
import { sql } from "kysely";
import { type Database, openDatabase } from "../../src/db/database.ts";
import type { DeviceRow } from "../../src/repositories/devices.ts";
import { createRepositories, type Repositories, type Viewer } from "../../src/repositories/index.ts";
import type { ProjectRow } from "../../src/repositories/projects.ts";
import type { UserRow } from "../../src/repositories/users.ts";
import { postgresUrl } from "./postgres.ts";
import { tempDir } from "./server.ts";

/** Opens a fresh, migrated database for one test, or returns null when the test was skipped. */
type Open = (t: TestContext) => Promise<Database | null>;

/** Well past 2^32 ms, so a 32-bit column would overflow: timestamps must be stored as 64-bit integers. */
export const T0 = Date.UTC(2026, 0, 1);
export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;

/**
 * Every table and its columns, in declaration order, as both dialects must store them. Kysely's own
 * bookkeeping tables (kysely_migration*) are left out.
 */
export const expectedSchema: Record<string, string[]> = {
  alert_deliveries: [
    "id",
    "project_id",
    "webhook_id",
    "type",
    "body",
    "status",
    "attempts",
    "next_attempt_at",
    "created_at",
  ],
  alert_episodes: ["rule_id", "subject", "opened_at"],
  alert_rules: ["id", "project_id", "kind", "minutes", "count", "window_minutes", "created_at"],
  alert_webhooks: ["id", "project_id", "name", "url", "secret_encrypted", "created_at"],
  api_tokens: ["id", "user_id", "name", "token_hash", "created_at", "last_used_at"],
  audit_log: ["id", "at", "actor_id", "action", "project_id", "target_id", "detail"],
  deployments: [
    "id",
    "project_id",
    "version",
    "status",
    "sha256",
    "manifest",
    "error",
    "created_by",
    "created_at",
    "activated_at",
    "rollout",
  ],
  device_logs: ["id", "device_id", "at", "level", "source", "message"],
  device_state: ["device_id", "entity_id", "value", "updated_at"],
  device_state_history: ["id", "device_id", "entity_id", "value", "at"],
  device_tags: ["device_id", "project_id", "tag"],
  devices: [
    "id",
    "project_id",
    "name",
    "board",
    "secret_hash",
    "status",
    "last_seen_at",
    "firmware_version",
    "created_at",
    "updated_at",
    "instance_id",
    "claim_seq",
  ],
  deployment_bundles: ["deployment_id", "bundle", "source_map"],
  instances: ["id", "started_at", "lease_until"],
  key_check: ["name", "value", "created_at"],
  login_attempts: ["key", "at"],
  env_vars: ["project_id", "name", "value_encrypted", "updated_at"],
  firmware_releases: ["version", "board", "bytes", "sha256", "source", "created_at"],
  firmware_images: ["version", "board", "uf2"],
  projects: ["id", "owner_id", "name", "created_at", "updated_at"],
  project_retention: [
    "project_id",
    "log_max_entries",
    "log_max_age_days",
    "state_history_max_entries",
    "state_history_max_age_days",
    "updated_at",
  ],
  readiness: ["id", "checked_at"],
  sessions: ["id", "user_id", "created_at", "expires_at"],
  users: ["id", "email", "password_hash", "role", "created_at", "updated_at"],
};

export async function tableColumns(database: Database): Promise<Record<string, string[]>> {
  const rows =
    database.dialect === "sqlite"
      ? (
          await sql<{ tableName: string; columnName: string }>`
            select m.name as table_name, c.name as column_name
            from sqlite_master m join pragma_table_info(m.name) c
            where m.type = 'table' and m.name not like 'sqlite_%'
            order by m.name, c.cid`.execute(database.db)
        ).rows
      : (
          await sql<{ tableName: string; columnName: string }>`
            select table_name, column_name
            from information_schema.columns
            where table_schema = current_schema()
            order by table_name, ordinal_position`.execute(database.db)
        ).rows;
  const tables: Record<string, string[]> = {};
  for (const { tableName, columnName } of rows) {
    if (tableName.startsWith("kysely_migration")) continue;
    const columns = tables[tableName] ?? [];
    columns.push(columnName);
    tables[tableName] = columns;
  }
  return tables;
}
export interface Ctx {
  database: Database;
  repos: Repositories;
  /** Inserts a user; createdAt/updatedAt default to T0. */
  user(overrides?: Partial<UserRow>): Promise<UserRow>;
  project(ownerId: string, overrides?: Partial<ProjectRow>): Promise<ProjectRow>;
  device(projectId: string, overrides?: Partial<DeviceRow & { secretHash: string }>): Promise<DeviceRow>;
  secretHashOf(deviceId: string): Promise<string | undefined>;
}

function suiteHelpers(open: Open) {
  let seq = 0;
  const nextId = (prefix: string) => `${prefix}_${String(++seq).padStart(6, "0")}`;

  /** A fresh database for this test, closed when the test ends (before its directory/schema goes). */
  async function setup(t: TestContext): Promise<Ctx | null> {
    let database: Database | null = null;
    t.after(async () => {
      await database?.close();
    });
    database = await open(t);
    if (!database) return null;
    const db = database;
    const repos = createRepositories(db.db, db.batcher);
    return {
      database: db,
      repos,
      async user(overrides = {}) {
        const id = overrides.id ?? nextId("usr");
        const row: UserRow = {
          id,
          email: `${id}@example.com`,
          passwordHash: `hash-of-${id}`,
          role: "member",
          createdAt: T0,
          updatedAt: T0,
          ...overrides,
        };
        await repos.users.insert(row);
        return row;
      },
      async project(ownerId, overrides = {}) {
        const id = overrides.id ?? nextId("prj");
        const row: ProjectRow = {
          id,
          ownerId,
          name: `project ${id}`,
          createdAt: T0,
          updatedAt: T0,
          ...overrides,
        };
        await repos.projects.insert(row);
        return row;
      },
      async device(projectId, overrides = {}) {
        const { secretHash = "secret-hash-0", status, ...rest } = overrides;
        const id = rest.id ?? nextId("dev");
        const row = {
          id,
          projectId,
          name: `device ${id}`,
          board: "pico_w" as const,
          lastSeenAt: null,
          firmwareVersion: null,
          createdAt: T0,
          updatedAt: T0,
          ...rest,
        };
        await repos.devices.insert({ ...row, secretHash });
        return { ...row, status: status ?? "offline" };
      },
      async secretHashOf(deviceId) {
        const row = await db.db
          .selectFrom("devices")
          .select("secretHash")
          .where("id", "=", deviceId)
          .executeTakeFirst();
        return row?.secretHash;
      },
    };
  }

  const viewerOf = (user: UserRow): Viewer => ({ userId: user.id, isAdmin: user.role === "admin" });

  /** Alice (member) and Bob (member) each own a project; Root is an admin who owns none. */
  async function tenants(c: Ctx) {
    const alice = await c.user({ email: "alice@example.com" });
    const bob = await c.user({ email: "bob@example.com" });
    const root = await c.user({ email: "root@example.com", role: "admin" });
    const aliceProject = await c.project(alice.id, { name: "alice's", createdAt: T0 + 1 });
    const bobProject = await c.project(bob.id, { name: "bob's", createdAt: T0 + 2 });
    return {
      alice,
      bob,
      root,
      aliceProject,
      bobProject,
      asAlice: viewerOf(alice),
      asBob: viewerOf(bob),
      asRoot: viewerOf(root),
    };
  }
  return { setup, tenants, viewerOf };
}

export type SuiteHelpers = ReturnType<typeof suiteHelpers>;

/**
 * Defines the same repository tests for SQLite and for PostgreSQL (skipped with a message where no
 * PostgreSQL answers, failing in CI).
 */
export function repositorySuites(title: string, body: (h: SuiteHelpers) => void): void {
  const dialects: [string, Open][] = [
    ["SQLite", async (t) => openDatabase({ dataDir: tempDir(t), databaseUrl: null })],
    [
      "PostgreSQL",
      async (t) => {
        const url = await postgresUrl(t);
        return url ? openDatabase({ dataDir: tempDir(t), databaseUrl: url }) : null;
      },
    ],
  ];
  for (const [name, open] of dialects) describe(`${title} on ${name}`, () => body(suiteHelpers(open)));
}
