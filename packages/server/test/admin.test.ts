import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { SdkApiError } from "@sdk/client";
import { startTestServer } from "./helpers/server.ts";

const code = (c: string) => (e: unknown) => e instanceof SdkApiError && e.code === c;

test("admins list users, change roles and delete users; members cannot", async (t) => {
  const { user, dataDir } = await startTestServer(t);
  const { client: admin, auth: adminAuth } = await user("admin@example.com");
  const { client: bob, auth: bobAuth } = await user("bob@example.com");

  assert.deepEqual(
    (await admin.api.listUsers()).map((u) => [u.email, u.role]),
    [
      ["admin@example.com", "admin"],
      ["bob@example.com", "member"],
    ],
  );
  await assert.rejects(bob.api.listUsers(), code("forbidden"));
  await assert.rejects(
    bob.api.changeRole({ params: { userId: bobAuth.user.id }, body: { role: "admin" } }),
    code("forbidden"),
  );
  await assert.rejects(bob.api.deleteUser({ params: { userId: adminAuth.user.id } }), code("forbidden"));
  await assert.rejects(bob.api.listAudit(), code("forbidden"));

  const promoted = await admin.api.changeRole({
    params: { userId: bobAuth.user.id },
    body: { role: "admin" },
  });
  assert.equal(promoted.role, "admin");
  assert.equal((await bob.api.listUsers()).length, 2, "the new admin can now list users");
  await assert.rejects(
    admin.api.changeRole({ params: { userId: bobAuth.user.id }, body: { role: "owner" as "admin" } }),
    code("invalid_request"),
  );
  await assert.rejects(
    admin.api.changeRole({ params: { userId: "usr_nope" }, body: { role: "member" } }),
    code("not_found"),
  );

  // bob's project and its files go with bob
  const project = await bob.api.createProject({ body: { name: "bob's" } });
  const dir = path.join(dataDir, "projects", project.id);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, "bundle.js"), "x");
  await admin.api.deleteUser({ params: { userId: bobAuth.user.id } });
  assert.equal(fs.existsSync(dir), false);
  assert.deepEqual(
    (await admin.api.listUsers()).map((u) => u.email),
    ["admin@example.com"],
  );
  await assert.rejects(bob.api.whoami(), code("invalid_token"));
  assert.deepEqual(await admin.api.listProjects(), []);
  await assert.rejects(admin.api.deleteUser({ params: { userId: bobAuth.user.id } }), code("not_found"));
});

test("the last admin can be neither demoted nor deleted", async (t) => {
  const { user } = await startTestServer(t);
  const { client: admin, auth } = await user("admin@example.com");
  await assert.rejects(
    admin.api.changeRole({ params: { userId: auth.user.id }, body: { role: "member" } }),
    code("last_admin"),
  );
  await assert.rejects(admin.api.deleteUser({ params: { userId: auth.user.id } }), code("last_admin"));
  assert.equal((await admin.api.whoami()).role, "admin");
});

test("the audit log records who did what, newest first, with paging", async (t) => {
  const { user } = await startTestServer(t);
  const { client: admin, auth } = await user("admin@example.com");
  const project = await admin.api.createProject({ body: { name: "p" } });
  await admin.api.setEnvVar({
    params: { projectId: project.id, name: "API_KEY" },
    body: { value: "secret value" },
  });
  const entries = await admin.api.listAudit();
  assert.deepEqual(
    entries.map((e) => e.action),
    ["env.set", "project.created", "user.registered"],
  );
  assert.equal(entries[0]!.actorId, auth.user.id);
  assert.equal(entries[0]!.projectId, project.id);
  assert.deepEqual(entries[0]!.detail, { name: "API_KEY" }, "values are never written to the audit log");
  const page1 = await admin.api.listAudit({ query: { limit: 2 } });
  const page2 = await admin.api.listAudit({ query: { limit: 2, before: page1[1]!.id } });
  assert.deepEqual(
    [...page1, ...page2].map((e) => e.id),
    entries.map((e) => e.id),
  );
  await assert.rejects(admin.api.listAudit({ query: { limit: 0 } }), code("invalid_request"));
});

test("admins add accounts directly, even with registration closed; members cannot", async (t) => {
  const { user, anon } = await startTestServer(t, { env: { ALLOW_REGISTRATION: "false" } });
  const { client: admin } = await user("admin@example.com");
  const created = await admin.api.createUser({
    body: { email: " New@Example.com", password: "a fine password" },
  });
  assert.equal(created.email, "new@example.com");
  assert.equal(created.role, "member");
  const login = await anon.api.login({
    body: { email: "new@example.com", password: "a fine password", issueToken: true },
  });
  assert.equal(login.user.id, created.id);
  await assert.rejects(
    admin.api.createUser({ body: { email: "new@example.com", password: "another one" } }),
    code("conflict"),
  );
  await assert.rejects(
    admin.api.createUser({ body: { email: "x@example.com", password: "short" } }),
    code("invalid_request"),
  );
  const member = anon.api.login({
    body: { email: "new@example.com", password: "a fine password", issueToken: true },
  });
  const memberClient = (await import("@sdk/client")).SdkClient;
  const mc = new memberClient({ baseUrl: anon.baseUrl, token: (await member).token!.token });
  await assert.rejects(
    mc.api.createUser({ body: { email: "y@example.com", password: "a fine password" } }),
    code("forbidden"),
  );
  const second = await admin.api.createUser({
    body: { email: "ops@example.com", password: "a fine password", role: "admin" },
  });
  assert.equal(second.role, "admin");
});
