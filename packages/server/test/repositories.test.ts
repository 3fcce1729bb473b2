import assert from "node:assert/strict";
import { describe, type TestContext, test } from "node:test";
import { sql } from "kysely";
import { type Database, openDatabase } from "../src/db/database.ts";
import type { ApiTokenRow } from "../src/repositories/api-tokens.ts";
import type { AuditRow } from "../src/repositories/audit-log.ts";
import type { DeviceRow } from "../src/repositories/devices.ts";
import { createRepositories, type Repositories, type Viewer } from "../src/repositories/index.ts";
import type { ProjectRow } from "../src/repositories/projects.ts";
import type { UserRow } from "../src/repositories/users.ts";
import { postgresUrl } from "./helpers/postgres.ts";
import { tempDir } from "./helpers/server.ts";

/** Opens a fresh, migrated database for one test, or returns null when the test was skipped. */
type Open = (t: TestContext) => Promise<Database | null>;

/**
 * Every table and its columns, in declaration order, as both dialects must store them. Kysely's own
 * bookkeeping tables (kysely_migration*) are left out.
 */
const expectedSchema: Record<string, string[]> = {
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
  ],
  device_logs: ["id", "device_id", "at", "level", "source", "message"],
  device_state: ["device_id", "entity_id", "value", "updated_at"],
  device_state_history: ["id", "device_id", "entity_id", "value", "at"],
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
  ],
  env_vars: ["project_id", "name", "value_encrypted", "updated_at"],
  projects: ["id", "owner_id", "name", "created_at", "updated_at"],
  readiness: ["id", "checked_at"],
  sessions: ["id", "user_id", "created_at", "expires_at"],
  users: ["id", "email", "password_hash", "role", "created_at", "updated_at"],
};

/** Well past 2^32 ms, so a 32-bit column would overflow: timestamps must be stored as 64-bit integers. */
const T0 = Date.UTC(2026, 0, 1);
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

async function tableColumns(database: Database): Promise<Record<string, string[]>> {
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

function repositorySuite(name: string, open: Open): void {
  describe(`repositories on ${name}`, () => {
    interface Ctx {
      database: Database;
      repos: Repositories;
      /** Inserts a user; createdAt/updatedAt default to T0. */
      user(overrides?: Partial<UserRow>): Promise<UserRow>;
      project(ownerId: string, overrides?: Partial<ProjectRow>): Promise<ProjectRow>;
      device(projectId: string, overrides?: Partial<DeviceRow & { secretHash: string }>): Promise<DeviceRow>;
      secretHashOf(deviceId: string): Promise<string | undefined>;
    }

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

    // ── schema ─────────────────────────────────────────────────────────────────────────────────────

    test("the migrated schema has exactly the expected tables and snake_case columns", async (t) => {
      const c = await setup(t);
      if (!c) return;
      assert.deepEqual(await tableColumns(c.database), expectedSchema);
    });

    test("timestamps and counts come back as JS numbers (64-bit integers parsed, not strings)", async (t) => {
      const c = await setup(t);
      if (!c) return;
      const big = T0 + 123_456; // > 2^31: would not fit a 32-bit integer column
      const user = await c.user({ createdAt: big, updatedAt: big + 1 });
      const project = await c.project(user.id, { createdAt: big, updatedAt: big });
      await c.device(project.id, { createdAt: big, updatedAt: big, lastSeenAt: big + 2 });
      await c.repos.envVars.upsert({ projectId: project.id, name: "A", valueEncrypted: "x", updatedAt: big });
      await c.repos.sessions.insert({ id: "s1", userId: user.id, createdAt: big, expiresAt: big + HOUR });
      await c.repos.apiTokens.insert({
        id: "tok_1",
        userId: user.id,
        name: "cli",
        tokenHash: "th1",
        createdAt: big,
        lastUsedAt: big + 3,
      });
      await c.repos.auditLog.insert({
        id: "aud_1",
        at: big,
        actorId: user.id,
        action: "x",
        projectId: null,
        targetId: null,
        detail: "{}",
      });
      await c.repos.readiness.write("probe", big);

      const found = await c.repos.users.findById(user.id);
      assert.deepEqual(found, user);
      assert.equal(typeof found?.createdAt, "number");
      assert.equal(typeof found?.updatedAt, "number");

      const [listedProject] = await c.repos.projects.listVisible(viewerOf(user));
      assert.equal(typeof listedProject?.createdAt, "number");
      assert.equal(listedProject?.createdAt, big);

      const [device] = await c.repos.devices.list(viewerOf(user), project.id);
      assert.equal(typeof device?.createdAt, "number");
      assert.equal(typeof device?.lastSeenAt, "number");
      assert.equal(device?.lastSeenAt, big + 2);

      const [envVar] = await c.repos.envVars.list(viewerOf(user), project.id);
      assert.equal(typeof envVar?.updatedAt, "number");

      const sessionUser = await c.repos.sessions.findUser("s1", big);
      assert.equal(typeof sessionUser?.createdAt, "number");

      const token = await c.repos.apiTokens.findByHash("th1");
      assert.equal(typeof token?.tokenLastUsedAt, "number");
      assert.equal(typeof token?.user.createdAt, "number");
      const [listedToken] = await c.repos.apiTokens.listForUser(user.id);
      assert.equal(typeof listedToken?.createdAt, "number");
      assert.equal(typeof listedToken?.lastUsedAt, "number");

      const [entry] = await c.repos.auditLog.list(10);
      assert.equal(typeof entry?.at, "number");
      assert.equal(entry?.at, big);

      const readiness = await c.database.db.selectFrom("readiness").selectAll().executeTakeFirstOrThrow();
      assert.equal(typeof readiness.checkedAt, "number");

      assert.equal(typeof (await c.repos.users.count()), "number");
      assert.equal(typeof (await c.repos.users.countAdmins()), "number");
      assert.equal(typeof (await c.repos.envVars.count(project.id)), "number");
    });

    // ── users ──────────────────────────────────────────────────────────────────────────────────────

    test("users: insert, then find by id and by email; unknown ones are undefined", async (t) => {
      const c = await setup(t);
      if (!c) return;
      const alice = await c.user({ email: "alice@example.com", passwordHash: "h-a" });
      assert.deepEqual(await c.repos.users.findById(alice.id), alice);
      assert.deepEqual(await c.repos.users.findByEmail("alice@example.com"), alice);
      assert.equal(await c.repos.users.findById("usr_missing"), undefined);
      assert.equal(await c.repos.users.findByEmail("nobody@example.com"), undefined);
    });

    test("users: an email already taken is refused by the database", async (t) => {
      const c = await setup(t);
      if (!c) return;
      await c.user({ email: "same@example.com" });
      await assert.rejects(c.user({ email: "same@example.com" }));
      assert.equal(await c.repos.users.count(), 1);
    });

    test("users: count and countAdmins", async (t) => {
      const c = await setup(t);
      if (!c) return;
      assert.equal(await c.repos.users.count(), 0);
      assert.equal(await c.repos.users.countAdmins(), 0);
      await c.user({ role: "admin" });
      await c.user();
      await c.user();
      await c.user({ role: "admin" });
      assert.equal(await c.repos.users.count(), 4);
      assert.equal(await c.repos.users.countAdmins(), 2);
    });

    test("users: list is ordered by createdAt, then id", async (t) => {
      const c = await setup(t);
      if (!c) return;
      const late = await c.user({ id: "usr_a", createdAt: T0 + 2 });
      const tieB = await c.user({ id: "usr_c", createdAt: T0 + 1 });
      const tieA = await c.user({ id: "usr_b", createdAt: T0 + 1 });
      const early = await c.user({ id: "usr_d", createdAt: T0 });
      assert.deepEqual(
        (await c.repos.users.list()).map((u) => u.id),
        [early.id, tieA.id, tieB.id, late.id],
      );
    });

    test("users: updateRole changes role and updatedAt of that user only and returns the row", async (t) => {
      const c = await setup(t);
      if (!c) return;
      const alice = await c.user();
      const bob = await c.user();
      const updated = await c.repos.users.updateRole(alice.id, "admin", T0 + HOUR);
      assert.deepEqual(updated, { ...alice, role: "admin", updatedAt: T0 + HOUR });
      assert.deepEqual(await c.repos.users.findById(alice.id), updated);
      assert.deepEqual(await c.repos.users.findById(bob.id), bob);
      assert.equal(await c.repos.users.countAdmins(), 1);
      assert.equal(await c.repos.users.updateRole("usr_missing", "admin", T0), undefined);
    });

    test("users: updatePassword changes hash and updatedAt of that user only", async (t) => {
      const c = await setup(t);
      if (!c) return;
      const alice = await c.user({ passwordHash: "old" });
      const bob = await c.user({ passwordHash: "bob's" });
      await c.repos.users.updatePassword(alice.id, "new", T0 + MINUTE);
      assert.deepEqual(await c.repos.users.findById(alice.id), {
        ...alice,
        passwordHash: "new",
        updatedAt: T0 + MINUTE,
      });
      assert.deepEqual(await c.repos.users.findById(bob.id), bob);
    });

    test("users: delete cascades to sessions, API tokens, projects, their devices and env vars", async (t) => {
      const c = await setup(t);
      if (!c) return;
      const { alice, bob, aliceProject, bobProject, asBob, asRoot } = await tenants(c);
      for (const [user, project] of [
        [alice, aliceProject],
        [bob, bobProject],
      ] as const) {
        await c.repos.sessions.insert({
          id: `ses-${user.id}`,
          userId: user.id,
          createdAt: T0,
          expiresAt: T0 + HOUR,
        });
        await c.repos.apiTokens.insert({
          id: `tok-${user.id}`,
          userId: user.id,
          name: "cli",
          tokenHash: `hash-${user.id}`,
          createdAt: T0,
          lastUsedAt: null,
        });
        await c.device(project.id, { id: `dev-${user.id}` });
        await c.repos.envVars.upsert({
          projectId: project.id,
          name: "KEY",
          valueEncrypted: "v",
          updatedAt: T0,
        });
      }
      const aliceDevice = `dev-${alice.id}`;

      assert.deepEqual(await c.repos.projects.idsOwnedBy(alice.id), [aliceProject.id]);
      assert.equal(await c.repos.users.delete(alice.id), true);

      assert.equal(await c.repos.users.findById(alice.id), undefined);
      assert.equal(await c.repos.sessions.findUser(`ses-${alice.id}`, T0), undefined);
      assert.equal(await c.repos.apiTokens.findByHash(`hash-${alice.id}`), undefined);
      assert.deepEqual(await c.repos.apiTokens.listForUser(alice.id), []);
      assert.deepEqual(await c.repos.projects.idsOwnedBy(alice.id), []);
      assert.equal(await c.repos.projects.findVisible(asRoot, aliceProject.id), undefined);
      assert.equal(await c.repos.devices.find(asRoot, aliceProject.id, aliceDevice), undefined);
      assert.equal(await c.secretHashOf(aliceDevice), undefined);
      assert.equal(await c.repos.envVars.count(aliceProject.id), 0);

      // Bob's data is untouched.
      assert.equal((await c.repos.sessions.findUser(`ses-${bob.id}`, T0))?.id, bob.id);
      assert.equal((await c.repos.apiTokens.findByHash(`hash-${bob.id}`))?.user.id, bob.id);
      assert.deepEqual(
        (await c.repos.projects.listVisible(asRoot)).map((p) => p.id),
        [bobProject.id],
      );
      assert.equal((await c.repos.devices.list(asBob, bobProject.id)).length, 1);
      assert.equal(await c.repos.envVars.count(bobProject.id), 1);
      assert.equal(await c.repos.users.count(), 2);

      assert.equal(await c.repos.users.delete(alice.id), false, "deleting twice finds nothing");
    });

    // ── sessions ───────────────────────────────────────────────────────────────────────────────────

    test("sessions: findUser returns the user until expiresAt, not at or after it", async (t) => {
      const c = await setup(t);
      if (!c) return;
      const alice = await c.user();
      await c.repos.sessions.insert({ id: "s-alice", userId: alice.id, createdAt: T0, expiresAt: T0 + HOUR });
      assert.deepEqual(await c.repos.sessions.findUser("s-alice", T0), alice);
      assert.deepEqual(await c.repos.sessions.findUser("s-alice", T0 + HOUR - 1), alice);
      assert.equal(await c.repos.sessions.findUser("s-alice", T0 + HOUR), undefined);
      assert.equal(await c.repos.sessions.findUser("s-alice", T0 + 2 * HOUR), undefined);
      assert.equal(await c.repos.sessions.findUser("s-unknown", T0), undefined);
    });

    test("sessions: delete removes only that session", async (t) => {
      const c = await setup(t);
      if (!c) return;
      const alice = await c.user();
      await c.repos.sessions.insert({ id: "s1", userId: alice.id, createdAt: T0, expiresAt: T0 + HOUR });
      await c.repos.sessions.insert({ id: "s2", userId: alice.id, createdAt: T0, expiresAt: T0 + HOUR });
      await c.repos.sessions.delete("s1");
      assert.equal(await c.repos.sessions.findUser("s1", T0), undefined);
      assert.equal((await c.repos.sessions.findUser("s2", T0))?.id, alice.id);
      await c.repos.sessions.delete("s-unknown"); // no error
    });

    test("sessions: deleteOthers keeps the given session and other users' sessions", async (t) => {
      const c = await setup(t);
      if (!c) return;
      const alice = await c.user();
      const bob = await c.user();
      for (const id of ["a1", "a2", "a3"]) {
        await c.repos.sessions.insert({ id, userId: alice.id, createdAt: T0, expiresAt: T0 + HOUR });
      }
      await c.repos.sessions.insert({ id: "b1", userId: bob.id, createdAt: T0, expiresAt: T0 + HOUR });

      await c.repos.sessions.deleteOthers(alice.id, "a2");
      assert.equal(await c.repos.sessions.findUser("a1", T0), undefined);
      assert.equal((await c.repos.sessions.findUser("a2", T0))?.id, alice.id);
      assert.equal(await c.repos.sessions.findUser("a3", T0), undefined);
      assert.equal((await c.repos.sessions.findUser("b1", T0))?.id, bob.id);

      // Without a session to keep (signed in by API token), all of the user's sessions end.
      await c.repos.sessions.deleteOthers(alice.id, null);
      assert.equal(await c.repos.sessions.findUser("a2", T0), undefined);
      assert.equal((await c.repos.sessions.findUser("b1", T0))?.id, bob.id);
    });

    test("sessions: deleteExpired removes sessions with expiresAt <= now only", async (t) => {
      const c = await setup(t);
      if (!c) return;
      const alice = await c.user();
      await c.repos.sessions.insert({ id: "old", userId: alice.id, createdAt: T0, expiresAt: T0 + MINUTE });
      await c.repos.sessions.insert({ id: "edge", userId: alice.id, createdAt: T0, expiresAt: T0 + HOUR });
      await c.repos.sessions.insert({
        id: "live",
        userId: alice.id,
        createdAt: T0,
        expiresAt: T0 + HOUR + 1,
      });
      await c.repos.sessions.deleteExpired(T0 + HOUR);
      const left = await c.database.db.selectFrom("sessions").select("id").orderBy("id").execute();
      assert.deepEqual(
        left.map((r) => r.id),
        ["live"],
      );
      assert.equal((await c.repos.sessions.findUser("live", T0 + HOUR))?.id, alice.id);
    });

    // ── API tokens ─────────────────────────────────────────────────────────────────────────────────

    const tokenRow = (userId: string, id: string, overrides: Partial<ApiTokenRow> = {}): ApiTokenRow => ({
      id,
      userId,
      name: `token ${id}`,
      tokenHash: `hash-${id}`,
      createdAt: T0,
      lastUsedAt: null,
      ...overrides,
    });

    test("api tokens: findByHash returns the token id, its last use and its user", async (t) => {
      const c = await setup(t);
      if (!c) return;
      const alice = await c.user({ role: "admin" });
      await c.repos.apiTokens.insert(tokenRow(alice.id, "tok_a"));
      assert.deepEqual(await c.repos.apiTokens.findByHash("hash-tok_a"), {
        tokenId: "tok_a",
        tokenLastUsedAt: null,
        user: alice,
      });
      assert.equal(await c.repos.apiTokens.findByHash("hash-unknown"), undefined);
      assert.equal(await c.repos.apiTokens.findByHash("tok_a"), undefined, "the id is not the hash");
    });

    test("api tokens: listForUser lists only that user's tokens, by createdAt then id", async (t) => {
      const c = await setup(t);
      if (!c) return;
      const alice = await c.user();
      const bob = await c.user();
      await c.repos.apiTokens.insert(tokenRow(alice.id, "tok_3", { createdAt: T0 + 2 }));
      await c.repos.apiTokens.insert(tokenRow(bob.id, "tok_0", { createdAt: T0 }));
      await c.repos.apiTokens.insert(tokenRow(alice.id, "tok_2", { createdAt: T0 + 1 }));
      await c.repos.apiTokens.insert(tokenRow(alice.id, "tok_1", { createdAt: T0 + 1, lastUsedAt: T0 + 5 }));
      assert.deepEqual(await c.repos.apiTokens.listForUser(alice.id), [
        { id: "tok_1", name: "token tok_1", createdAt: T0 + 1, lastUsedAt: T0 + 5 },
        { id: "tok_2", name: "token tok_2", createdAt: T0 + 1, lastUsedAt: null },
        { id: "tok_3", name: "token tok_3", createdAt: T0 + 2, lastUsedAt: null },
      ]);
      assert.deepEqual(
        (await c.repos.apiTokens.listForUser(bob.id)).map((r) => r.id),
        ["tok_0"],
      );
      assert.deepEqual(await c.repos.apiTokens.listForUser("usr_missing"), []);
    });

    test("api tokens: touch records the last use of that token only", async (t) => {
      const c = await setup(t);
      if (!c) return;
      const alice = await c.user();
      await c.repos.apiTokens.insert(tokenRow(alice.id, "tok_a"));
      await c.repos.apiTokens.insert(tokenRow(alice.id, "tok_b"));
      await c.repos.apiTokens.touch("tok_a", T0 + MINUTE);
      assert.equal((await c.repos.apiTokens.findByHash("hash-tok_a"))?.tokenLastUsedAt, T0 + MINUTE);
      assert.equal((await c.repos.apiTokens.findByHash("hash-tok_b"))?.tokenLastUsedAt, null);
      await c.repos.apiTokens.touch("tok_a", T0 + HOUR);
      assert.equal((await c.repos.apiTokens.findByHash("hash-tok_a"))?.tokenLastUsedAt, T0 + HOUR);
    });

    test("api tokens: deleteForUser deletes the user's own token and refuses another user's", async (t) => {
      const c = await setup(t);
      if (!c) return;
      const alice = await c.user();
      const bob = await c.user({ role: "admin" });
      await c.repos.apiTokens.insert(tokenRow(alice.id, "tok_a"));
      await c.repos.apiTokens.insert(tokenRow(bob.id, "tok_b"));

      assert.equal(await c.repos.apiTokens.deleteForUser(bob.id, "tok_a"), false, "not even an admin's");
      assert.equal((await c.repos.apiTokens.findByHash("hash-tok_a"))?.user.id, alice.id);
      assert.equal(await c.repos.apiTokens.deleteForUser(alice.id, "tok_missing"), false);

      assert.equal(await c.repos.apiTokens.deleteForUser(alice.id, "tok_a"), true);
      assert.equal(await c.repos.apiTokens.findByHash("hash-tok_a"), undefined);
      assert.equal(await c.repos.apiTokens.deleteForUser(alice.id, "tok_a"), false);
      assert.equal((await c.repos.apiTokens.findByHash("hash-tok_b"))?.user.id, bob.id);
    });

    // ── projects ───────────────────────────────────────────────────────────────────────────────────

    test("projects: listVisible shows owners their own, members none of others', admins all", async (t) => {
      const c = await setup(t);
      if (!c) return;
      const { alice, aliceProject, bobProject, asAlice, asBob, asRoot } = await tenants(c);
      const aliceSecond = await c.project(alice.id, { createdAt: T0 + 3 });
      const carol = await c.user();

      assert.deepEqual(await c.repos.projects.listVisible(asAlice), [aliceProject, aliceSecond]);
      assert.deepEqual(await c.repos.projects.listVisible(asBob), [bobProject]);
      assert.deepEqual(await c.repos.projects.listVisible(viewerOf(carol)), []);
      assert.deepEqual(await c.repos.projects.listVisible(asRoot), [aliceProject, bobProject, aliceSecond]);
      // isAdmin is what counts, not the stored role.
      assert.deepEqual(await c.repos.projects.listVisible({ userId: carol.id, isAdmin: true }), [
        aliceProject,
        bobProject,
        aliceSecond,
      ]);
    });

    test("projects: findVisible finds a project for its owner and admins, not for others", async (t) => {
      const c = await setup(t);
      if (!c) return;
      const { aliceProject, asAlice, asBob, asRoot } = await tenants(c);
      assert.deepEqual(await c.repos.projects.findVisible(asAlice, aliceProject.id), aliceProject);
      assert.deepEqual(await c.repos.projects.findVisible(asRoot, aliceProject.id), aliceProject);
      assert.equal(await c.repos.projects.findVisible(asBob, aliceProject.id), undefined);
      assert.equal(await c.repos.projects.findVisible(asRoot, "prj_missing"), undefined);
    });

    test("projects: rename by a non-owner member returns undefined and changes nothing", async (t) => {
      const c = await setup(t);
      if (!c) return;
      const { aliceProject, asAlice, asBob, asRoot } = await tenants(c);
      assert.equal(await c.repos.projects.rename(asBob, aliceProject.id, "hijacked", T0 + HOUR), undefined);
      assert.deepEqual(await c.repos.projects.findVisible(asAlice, aliceProject.id), aliceProject);

      const renamed = await c.repos.projects.rename(asAlice, aliceProject.id, "renamed", T0 + HOUR);
      assert.deepEqual(renamed, { ...aliceProject, name: "renamed", updatedAt: T0 + HOUR });
      assert.deepEqual(await c.repos.projects.findVisible(asAlice, aliceProject.id), renamed);

      const byAdmin = await c.repos.projects.rename(asRoot, aliceProject.id, "by admin", T0 + 2 * HOUR);
      assert.equal(byAdmin?.name, "by admin");
      assert.equal(byAdmin?.updatedAt, T0 + 2 * HOUR);
      assert.equal(await c.repos.projects.rename(asRoot, "prj_missing", "x", T0), undefined);
    });

    test("projects: delete by a non-owner member returns false and changes nothing", async (t) => {
      const c = await setup(t);
      if (!c) return;
      const { aliceProject, bobProject, asAlice, asBob, asRoot } = await tenants(c);
      await c.device(aliceProject.id, { id: "dev_a" });
      await c.repos.envVars.upsert({
        projectId: aliceProject.id,
        name: "K",
        valueEncrypted: "v",
        updatedAt: T0,
      });

      assert.equal(await c.repos.projects.delete(asBob, aliceProject.id), false);
      assert.deepEqual(await c.repos.projects.findVisible(asAlice, aliceProject.id), aliceProject);
      assert.equal((await c.repos.devices.list(asAlice, aliceProject.id)).length, 1);
      assert.equal(await c.repos.envVars.count(aliceProject.id), 1);

      assert.equal(await c.repos.projects.delete(asAlice, aliceProject.id), true);
      assert.equal(await c.repos.projects.findVisible(asRoot, aliceProject.id), undefined);
      assert.equal(await c.secretHashOf("dev_a"), undefined, "devices go with their project");
      assert.equal(await c.repos.envVars.count(aliceProject.id), 0, "env vars go with their project");
      assert.equal(await c.repos.projects.delete(asAlice, aliceProject.id), false);

      assert.equal(await c.repos.projects.delete(asRoot, bobProject.id), true, "an admin may delete any");
      assert.deepEqual(await c.repos.projects.listVisible(asRoot), []);
    });

    test("projects: idsOwnedBy lists the ids of a user's own projects", async (t) => {
      const c = await setup(t);
      if (!c) return;
      const { alice, root, aliceProject } = await tenants(c);
      const second = await c.project(alice.id);
      assert.deepEqual(
        (await c.repos.projects.idsOwnedBy(alice.id)).sort(),
        [aliceProject.id, second.id].sort(),
      );
      assert.deepEqual(await c.repos.projects.idsOwnedBy(root.id), []);
    });

    // ── devices ────────────────────────────────────────────────────────────────────────────────────

    test("devices: list and find follow project visibility and never expose the secret hash", async (t) => {
      const c = await setup(t);
      if (!c) return;
      const { aliceProject, bobProject, asAlice, asBob, asRoot } = await tenants(c);
      const d2 = await c.device(aliceProject.id, { id: "dev_2", createdAt: T0 + 1, board: "pico2_w" });
      const d1 = await c.device(aliceProject.id, {
        id: "dev_1",
        createdAt: T0 + 1,
        firmwareVersion: "1.2.3",
      });
      const d0 = await c.device(aliceProject.id, { id: "dev_9", createdAt: T0, lastSeenAt: T0 + 7 });
      await c.device(bobProject.id, { id: "dev_b" });

      const listed = await c.repos.devices.list(asAlice, aliceProject.id);
      assert.deepEqual(listed, [d0, d1, d2], "ordered by createdAt, then id");
      for (const row of listed) {
        assert.equal(row.status, "offline", "status defaults to offline");
        assert.equal("secretHash" in row, false);
      }
      assert.deepEqual(await c.repos.devices.list(asRoot, aliceProject.id), [d0, d1, d2]);
      assert.deepEqual(await c.repos.devices.list(asBob, aliceProject.id), []);

      assert.deepEqual(await c.repos.devices.find(asAlice, aliceProject.id, "dev_1"), d1);
      assert.deepEqual(await c.repos.devices.find(asRoot, aliceProject.id, "dev_1"), d1);
      assert.equal(await c.repos.devices.find(asBob, aliceProject.id, "dev_1"), undefined);
      assert.equal(await c.repos.devices.find(asAlice, aliceProject.id, "dev_missing"), undefined);
    });

    test("devices: a device is not found, renamed, re-keyed or deleted via another project's id", async (t) => {
      const c = await setup(t);
      if (!c) return;
      const { bob, aliceProject, bobProject, asAlice, asBob, asRoot } = await tenants(c);
      const bobOther = await c.project(bob.id);
      const device = await c.device(bobProject.id, { id: "dev_b", secretHash: "original" });

      // Alice's own (visible) project id does not reach Bob's device; nor does Bob's other project,
      // nor does an admin get through with the wrong project id.
      for (const [viewer, projectId] of [
        [asAlice, aliceProject.id],
        [asBob, bobOther.id],
        [asRoot, aliceProject.id],
      ] as const) {
        assert.equal(await c.repos.devices.find(viewer, projectId, device.id), undefined);
        assert.deepEqual(await c.repos.devices.list(viewer, projectId), []);
        assert.equal(await c.repos.devices.rename(viewer, projectId, device.id, "x", T0 + HOUR), undefined);
        assert.equal(
          await c.repos.devices.setSecretHash(viewer, projectId, device.id, "stolen", T0 + HOUR),
          false,
        );
        assert.equal(await c.repos.devices.delete(viewer, projectId, device.id), false);
      }
      assert.deepEqual(await c.repos.devices.find(asBob, bobProject.id, device.id), device);
      assert.equal(await c.secretHashOf(device.id), "original");
    });

    test("devices: rename returns the renamed row for a visible project, undefined otherwise", async (t) => {
      const c = await setup(t);
      if (!c) return;
      const { aliceProject, asAlice, asBob, asRoot } = await tenants(c);
      const device = await c.device(aliceProject.id);

      assert.equal(
        await c.repos.devices.rename(asBob, aliceProject.id, device.id, "bob's now", T0 + HOUR),
        undefined,
      );
      assert.deepEqual(await c.repos.devices.find(asAlice, aliceProject.id, device.id), device);

      const renamed = await c.repos.devices.rename(asAlice, aliceProject.id, device.id, "kitchen", T0 + HOUR);
      assert.deepEqual(renamed, { ...device, name: "kitchen", updatedAt: T0 + HOUR });
      assert.equal("secretHash" in (renamed ?? {}), false);
      assert.deepEqual(await c.repos.devices.find(asAlice, aliceProject.id, device.id), renamed);

      const byAdmin = await c.repos.devices.rename(asRoot, aliceProject.id, device.id, "hall", T0 + 2 * HOUR);
      assert.equal(byAdmin?.name, "hall");
      assert.equal(await c.repos.devices.rename(asAlice, aliceProject.id, "dev_missing", "x", T0), undefined);
    });

    test("devices: setSecretHash re-keys a device of a visible project only", async (t) => {
      const c = await setup(t);
      if (!c) return;
      const { aliceProject, asAlice, asBob, asRoot } = await tenants(c);
      const device = await c.device(aliceProject.id, { secretHash: "first" });
      const other = await c.device(aliceProject.id, { secretHash: "other" });

      assert.equal(
        await c.repos.devices.setSecretHash(asBob, aliceProject.id, device.id, "bob's", T0 + HOUR),
        false,
      );
      assert.equal(await c.secretHashOf(device.id), "first");
      assert.deepEqual(await c.repos.devices.find(asAlice, aliceProject.id, device.id), device);

      assert.equal(
        await c.repos.devices.setSecretHash(asAlice, aliceProject.id, device.id, "second", T0 + HOUR),
        true,
      );
      assert.equal(await c.secretHashOf(device.id), "second");
      assert.equal((await c.repos.devices.find(asAlice, aliceProject.id, device.id))?.updatedAt, T0 + HOUR);
      assert.equal(await c.secretHashOf(other.id), "other");

      assert.equal(
        await c.repos.devices.setSecretHash(asRoot, aliceProject.id, device.id, "third", T0),
        true,
      );
      assert.equal(await c.secretHashOf(device.id), "third");
      assert.equal(
        await c.repos.devices.setSecretHash(asAlice, aliceProject.id, "dev_missing", "x", T0),
        false,
      );
    });

    test("devices: delete removes a device of a visible project only", async (t) => {
      const c = await setup(t);
      if (!c) return;
      const { aliceProject, asAlice, asBob, asRoot } = await tenants(c);
      const d1 = await c.device(aliceProject.id);
      const d2 = await c.device(aliceProject.id);

      assert.equal(await c.repos.devices.delete(asBob, aliceProject.id, d1.id), false);
      assert.deepEqual(await c.repos.devices.find(asAlice, aliceProject.id, d1.id), d1);

      assert.equal(await c.repos.devices.delete(asAlice, aliceProject.id, d1.id), true);
      assert.equal(await c.repos.devices.find(asAlice, aliceProject.id, d1.id), undefined);
      assert.equal(await c.repos.devices.delete(asAlice, aliceProject.id, d1.id), false);
      assert.deepEqual(await c.repos.devices.list(asAlice, aliceProject.id), [d2]);

      assert.equal(await c.repos.devices.delete(asRoot, aliceProject.id, d2.id), true);
      assert.deepEqual(await c.repos.devices.list(asAlice, aliceProject.id), []);
    });

    // ── env vars ───────────────────────────────────────────────────────────────────────────────────

    test("env vars: upsert inserts, then updates value and updatedAt in place", async (t) => {
      const c = await setup(t);
      if (!c) return;
      const { aliceProject, asAlice } = await tenants(c);
      const upsert = (valueEncrypted: string, updatedAt: number) =>
        c.repos.envVars.upsert({ projectId: aliceProject.id, name: "WIFI_SSID", valueEncrypted, updatedAt });

      await upsert("enc-1", T0);
      assert.deepEqual(await c.repos.envVars.list(asAlice, aliceProject.id), [
        { name: "WIFI_SSID", valueEncrypted: "enc-1", updatedAt: T0 },
      ]);
      await upsert("enc-2", T0 + HOUR);
      assert.deepEqual(await c.repos.envVars.list(asAlice, aliceProject.id), [
        { name: "WIFI_SSID", valueEncrypted: "enc-2", updatedAt: T0 + HOUR },
      ]);
      assert.equal(await c.repos.envVars.count(aliceProject.id), 1);
    });

    test("env vars: the same name in two projects is two variables", async (t) => {
      const c = await setup(t);
      if (!c) return;
      const { aliceProject, bobProject, asAlice, asBob } = await tenants(c);
      await c.repos.envVars.upsert({
        projectId: aliceProject.id,
        name: "KEY",
        valueEncrypted: "a",
        updatedAt: T0,
      });
      await c.repos.envVars.upsert({
        projectId: bobProject.id,
        name: "KEY",
        valueEncrypted: "b",
        updatedAt: T0,
      });
      assert.deepEqual(
        (await c.repos.envVars.list(asAlice, aliceProject.id)).map((v) => v.valueEncrypted),
        ["a"],
      );
      assert.deepEqual(
        (await c.repos.envVars.list(asBob, bobProject.id)).map((v) => v.valueEncrypted),
        ["b"],
      );
    });

    test("env vars: list is ordered by name and follows project visibility", async (t) => {
      const c = await setup(t);
      if (!c) return;
      const { aliceProject, asAlice, asBob, asRoot } = await tenants(c);
      // Names whose order is the same under byte-wise and linguistic collations.
      for (const name of ["WIFI_SSID", "API_KEY", "MQTT_HOST", "BROKER2", "BROKER1"]) {
        await c.repos.envVars.upsert({
          projectId: aliceProject.id,
          name,
          valueEncrypted: "v",
          updatedAt: T0,
        });
      }
      const expected = ["API_KEY", "BROKER1", "BROKER2", "MQTT_HOST", "WIFI_SSID"];
      assert.deepEqual(
        (await c.repos.envVars.list(asAlice, aliceProject.id)).map((v) => v.name),
        expected,
      );
      assert.deepEqual(
        (await c.repos.envVars.list(asRoot, aliceProject.id)).map((v) => v.name),
        expected,
      );
      assert.deepEqual(await c.repos.envVars.list(asBob, aliceProject.id), []);
    });

    test("env vars: count and exists are per project", async (t) => {
      const c = await setup(t);
      if (!c) return;
      const { aliceProject, bobProject } = await tenants(c);
      assert.equal(await c.repos.envVars.count(aliceProject.id), 0);
      assert.equal(await c.repos.envVars.exists(aliceProject.id, "A"), false);
      for (const name of ["A", "B", "C"]) {
        await c.repos.envVars.upsert({
          projectId: aliceProject.id,
          name,
          valueEncrypted: "v",
          updatedAt: T0,
        });
      }
      await c.repos.envVars.upsert({
        projectId: bobProject.id,
        name: "Z",
        valueEncrypted: "v",
        updatedAt: T0,
      });
      assert.equal(await c.repos.envVars.count(aliceProject.id), 3);
      assert.equal(await c.repos.envVars.count(bobProject.id), 1);
      assert.equal(await c.repos.envVars.exists(aliceProject.id, "B"), true);
      assert.equal(await c.repos.envVars.exists(aliceProject.id, "Z"), false);
      assert.equal(await c.repos.envVars.exists(bobProject.id, "Z"), true);
      assert.equal(await c.repos.envVars.exists(aliceProject.id, "b"), false, "names are case-sensitive");
    });

    test("env vars: delete removes a variable of a visible project only", async (t) => {
      const c = await setup(t);
      if (!c) return;
      const { aliceProject, asAlice, asBob, asRoot } = await tenants(c);
      for (const name of ["A", "B"]) {
        await c.repos.envVars.upsert({
          projectId: aliceProject.id,
          name,
          valueEncrypted: "v",
          updatedAt: T0,
        });
      }
      assert.equal(await c.repos.envVars.delete(asBob, aliceProject.id, "A"), false);
      assert.equal(await c.repos.envVars.exists(aliceProject.id, "A"), true);

      assert.equal(await c.repos.envVars.delete(asAlice, aliceProject.id, "A"), true);
      assert.equal(await c.repos.envVars.exists(aliceProject.id, "A"), false);
      assert.equal(await c.repos.envVars.delete(asAlice, aliceProject.id, "A"), false);
      assert.equal(await c.repos.envVars.delete(asAlice, aliceProject.id, "MISSING"), false);

      assert.equal(await c.repos.envVars.delete(asRoot, aliceProject.id, "B"), true);
      assert.equal(await c.repos.envVars.count(aliceProject.id), 0);
    });

    // ── audit log ──────────────────────────────────────────────────────────────────────────────────

    const auditRow = (id: string, at: number, overrides: Partial<AuditRow> = {}): AuditRow => ({
      id,
      at,
      actorId: null,
      action: "test.event",
      projectId: null,
      targetId: null,
      detail: "{}",
      ...overrides,
    });

    /** Inserted out of order; newest first they are e, d, c, b, a (c and d share a millisecond). */
    async function auditEntries(c: Ctx) {
      await c.repos.auditLog.insert(auditRow("aud_c", T0 + 2));
      await c.repos.auditLog.insert(auditRow("aud_a", T0));
      await c.repos.auditLog.insert(
        auditRow("aud_e", T0 + 3, {
          actorId: "usr_x",
          action: "project.created",
          projectId: "prj_x",
          targetId: "prj_x",
          detail: '{"name":"x"}',
        }),
      );
      await c.repos.auditLog.insert(auditRow("aud_d", T0 + 2));
      await c.repos.auditLog.insert(auditRow("aud_b", T0 + 1));
    }

    test("audit log: list is newest first, ties broken by id, and honours the limit", async (t) => {
      const c = await setup(t);
      if (!c) return;
      await auditEntries(c);
      const all = await c.repos.auditLog.list(100);
      assert.deepEqual(
        all.map((r) => r.id),
        ["aud_e", "aud_d", "aud_c", "aud_b", "aud_a"],
      );
      assert.deepEqual(all[0], {
        id: "aud_e",
        at: T0 + 3,
        actorId: "usr_x",
        action: "project.created",
        projectId: "prj_x",
        targetId: "prj_x",
        detail: '{"name":"x"}',
      });
      assert.deepEqual(
        (await c.repos.auditLog.list(2)).map((r) => r.id),
        ["aud_e", "aud_d"],
      );
    });

    test("audit log: paging with `before` walks every entry once, across equal timestamps", async (t) => {
      const c = await setup(t);
      if (!c) return;
      await auditEntries(c);
      const pages: string[][] = [];
      let before: string | undefined;
      for (;;) {
        const page = await c.repos.auditLog.list(2, before);
        if (page.length === 0) break;
        pages.push(page.map((r) => r.id));
        before = page.at(-1)?.id;
        assert.ok(pages.length < 10, "paging terminates");
      }
      assert.deepEqual(pages, [["aud_e", "aud_d"], ["aud_c", "aud_b"], ["aud_a"]]);
      assert.deepEqual(
        (await c.repos.auditLog.list(10, "aud_d")).map((r) => r.id),
        ["aud_c", "aud_b", "aud_a"],
      );
    });

    test("audit log: an unknown `before` gives an empty page", async (t) => {
      const c = await setup(t);
      if (!c) return;
      assert.deepEqual(await c.repos.auditLog.list(10), [], "an empty log");
      assert.deepEqual(await c.repos.auditLog.list(10, "aud_missing"), []);
      await auditEntries(c);
      assert.deepEqual(await c.repos.auditLog.list(10, "aud_missing"), []);
      assert.deepEqual(await c.repos.auditLog.list(10, "aud_a"), [], "nothing is older than the oldest");
    });

    // ── readiness ──────────────────────────────────────────────────────────────────────────────────

    test("readiness: write twice upserts the one row", async (t) => {
      const c = await setup(t);
      if (!c) return;
      await c.repos.readiness.write("probe", T0);
      await c.repos.readiness.write("probe", T0 + MINUTE);
      assert.deepEqual(await c.database.db.selectFrom("readiness").selectAll().execute(), [
        { id: "probe", checkedAt: T0 + MINUTE },
      ]);
      await c.repos.readiness.write("other", T0 + HOUR);
      assert.deepEqual(await c.database.db.selectFrom("readiness").selectAll().orderBy("id").execute(), [
        { id: "other", checkedAt: T0 + HOUR },
        { id: "probe", checkedAt: T0 + MINUTE },
      ]);
    });

    // ── device link: presence, logs, state ─────────────────────────────────────────────────────────

    test("devices: auth lookup, presence, mark all offline, ids in projects", async (t) => {
      const c = await setup(t);
      if (!c) return;
      const { aliceProject, bobProject, asAlice } = await tenants(c);
      const a = await c.device(aliceProject.id, { secretHash: "hash-a" });
      const b = await c.device(bobProject.id);
      assert.deepEqual(await c.repos.devices.findForAuth(a.id), {
        id: a.id,
        projectId: aliceProject.id,
        board: "pico_w",
        secretHash: "hash-a",
      });
      assert.equal(await c.repos.devices.findForAuth("dev_missing"), undefined);
      await c.repos.devices.setPresence(a.id, {
        status: "online",
        lastSeenAt: T0 + HOUR,
        firmwareVersion: "1.2.3",
      });
      await c.repos.devices.setPresence(b.id, { status: "online", lastSeenAt: T0 + HOUR });
      const seen = await c.repos.devices.find(asAlice, aliceProject.id, a.id);
      assert.equal(seen?.status, "online");
      assert.equal(seen?.lastSeenAt, T0 + HOUR);
      assert.equal(seen?.firmwareVersion, "1.2.3");
      await c.repos.devices.markAllOffline();
      assert.equal((await c.repos.devices.find(asAlice, aliceProject.id, a.id))?.status, "offline");
      assert.equal(
        (await c.repos.devices.find(asAlice, aliceProject.id, a.id))?.lastSeenAt,
        T0 + HOUR,
        "last seen is kept",
      );
      assert.deepEqual(
        (await c.repos.devices.idsInProjects([aliceProject.id, bobProject.id])).sort(),
        [a.id, b.id].sort(),
      );
      assert.deepEqual(await c.repos.devices.idsInProjects([]), []);
    });

    test("device logs: newest first with paging, visibility, pruning by count and by age", async (t) => {
      const c = await setup(t);
      if (!c) return;
      const { aliceProject, asAlice, asBob, asRoot } = await tenants(c);
      const d = await c.device(aliceProject.id);
      for (let i = 0; i < 10; i++) {
        await c.repos.deviceLogs.insert({
          id: `log_${String(i).padStart(3, "0")}`,
          deviceId: d.id,
          at: T0 + i * HOUR,
          level: "info",
          source: "device",
          message: `line ${i}`,
        });
      }
      const page = await c.repos.deviceLogs.list(asAlice, aliceProject.id, d.id, 3);
      assert.deepEqual(
        page.map((r) => r.message),
        ["line 9", "line 8", "line 7"],
      );
      assert.equal(typeof page[0]!.at, "number");
      assert.deepEqual(
        (await c.repos.deviceLogs.list(asAlice, aliceProject.id, d.id, 3, page[2]!.id)).map((r) => r.message),
        ["line 6", "line 5", "line 4"],
      );
      assert.deepEqual(
        await c.repos.deviceLogs.list(asBob, aliceProject.id, d.id, 10),
        [],
        "invisible to another member",
      );
      assert.equal(
        (await c.repos.deviceLogs.list(asRoot, aliceProject.id, d.id, 10)).length,
        10,
        "admins see it",
      );
      await c.repos.deviceLogs.pruneDevice(d.id, 6);
      assert.deepEqual(
        (await c.repos.deviceLogs.list(asAlice, aliceProject.id, d.id, 100)).map((r) => r.message),
        ["line 9", "line 8", "line 7", "line 6", "line 5", "line 4"],
      );
      await c.repos.deviceLogs.pruneOlderThan(T0 + 7 * HOUR);
      assert.deepEqual(
        (await c.repos.deviceLogs.list(asAlice, aliceProject.id, d.id, 100)).map((r) => r.message),
        ["line 9", "line 8", "line 7"],
      );
    });

    test("device state: latest value per entity, history newest first, pruning, visibility", async (t) => {
      const c = await setup(t);
      if (!c) return;
      const { aliceProject, asAlice, asBob } = await tenants(c);
      const d = await c.device(aliceProject.id);
      for (let i = 0; i < 5; i++) {
        await c.repos.deviceState.record({
          historyId: `sth_${i}`,
          deviceId: d.id,
          entityId: "temp",
          value: String(20 + i),
          at: T0 + i,
        });
      }
      await c.repos.deviceState.record({
        historyId: "sth_x",
        deviceId: d.id,
        entityId: "door",
        value: '{"open":true}',
        at: T0 + 9,
      });
      assert.deepEqual(await c.repos.deviceState.latest(asAlice, aliceProject.id, d.id), [
        { entityId: "door", value: '{"open":true}', updatedAt: T0 + 9 },
        { entityId: "temp", value: "24", updatedAt: T0 + 4 },
      ]);
      assert.equal(await c.repos.deviceState.countEntities(d.id), 2);
      assert.deepEqual(await c.repos.deviceState.latest(asBob, aliceProject.id, d.id), []);
      const history = await c.repos.deviceState.history(asAlice, aliceProject.id, d.id, "temp", 2);
      assert.deepEqual(
        history.map((h) => h.value),
        ["24", "23"],
      );
      assert.deepEqual(
        (await c.repos.deviceState.history(asAlice, aliceProject.id, d.id, "temp", 10, history[1]!.id)).map(
          (h) => h.value,
        ),
        ["22", "21", "20"],
      );
      assert.deepEqual(await c.repos.deviceState.history(asBob, aliceProject.id, d.id, "temp", 10), []);
      await c.repos.deviceState.pruneHistory(d.id, "temp", 2);
      assert.deepEqual(
        (await c.repos.deviceState.history(asAlice, aliceProject.id, d.id, "temp", 10)).map((h) => h.value),
        ["24", "23"],
      );
      assert.equal(
        (await c.repos.deviceState.history(asAlice, aliceProject.id, d.id, "door", 10)).length,
        1,
        "other entities keep theirs",
      );
    });
  });
}

repositorySuite("SQLite", async (t) => openDatabase({ dataDir: tempDir(t), databaseUrl: null }));

repositorySuite("PostgreSQL", async (t) => {
  const url = await postgresUrl(t);
  return url ? openDatabase({ dataDir: tempDir(t), databaseUrl: url }) : null;
});
