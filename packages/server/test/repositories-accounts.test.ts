import assert from "node:assert/strict";
import { test } from "node:test";
import type { ApiTokenRow } from "../src/repositories/api-tokens.ts";
import type { AuditRow } from "../src/repositories/audit-log.ts";
import {
  type Ctx,
  expectedSchema,
  HOUR,
  MINUTE,
  repositorySuites,
  T0,
  tableColumns,
} from "./helpers/repository-suite.ts";

repositorySuites("repositories: schema, accounts, projects, audit", ({ setup, tenants, viewerOf }) => {
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

    const [entry] = (await c.repos.auditLog.list(10))!;
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
    const all = (await c.repos.auditLog.list(100))!;
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
      (await c.repos.auditLog.list(2))!.map((r) => r.id),
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
      const page = (await c.repos.auditLog.list(2, before))!;
      if (page.length === 0) break;
      pages.push(page.map((r) => r.id));
      before = page.at(-1)?.id;
      assert.ok(pages.length < 10, "paging terminates");
    }
    assert.deepEqual(pages, [["aud_e", "aud_d"], ["aud_c", "aud_b"], ["aud_a"]]);
    assert.deepEqual(
      (await c.repos.auditLog.list(10, "aud_d"))!.map((r) => r.id),
      ["aud_c", "aud_b", "aud_a"],
    );
  });

  test("audit log: an unknown `before` gives null (the service refuses it), not a page", async (t) => {
    const c = await setup(t);
    if (!c) return;
    assert.deepEqual((await c.repos.auditLog.list(10))!, [], "an empty log");
    assert.equal(await c.repos.auditLog.list(10, "aud_missing"), null);
    await auditEntries(c);
    assert.equal(await c.repos.auditLog.list(10, "aud_missing"), null);
    assert.deepEqual((await c.repos.auditLog.list(10, "aud_a"))!, [], "nothing is older than the oldest");
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
});
