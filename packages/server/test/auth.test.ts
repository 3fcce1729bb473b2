import assert from "node:assert/strict";
import { test } from "node:test";
import { SdkApiError } from "@sdk/client";
import { raw, startTestServer } from "./helpers/server.ts";

const password = "correct horse battery";

function cookieOf(headers: Headers): string {
  const setCookie = headers.getSetCookie().find((c) => c.startsWith("sdk_session="));
  assert.ok(setCookie, "a session cookie is set");
  return setCookie;
}

async function rejects(promise: Promise<unknown>, status: number, code: string) {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof SdkApiError, `expected an API error, got ${error}`);
    assert.equal(error.status, status);
    assert.equal(error.code, code);
    assert.match(error.docs, new RegExp(`/docs/errors#${code}$`));
    return true;
  });
}

test("the first account becomes admin, later ones members; emails are normalised", async (t) => {
  const { anon } = await startTestServer(t);
  assert.deepEqual(await anon.api.serverInfo(), {
    version: "0.1.0",
    setupRequired: true,
    registrationOpen: true,
    deploymentsKept: 20,
  });
  const first = await anon.api.register({ body: { email: "  Alice@Example.COM ", password } });
  assert.equal(first.user.email, "alice@example.com");
  assert.equal(first.user.role, "admin");
  assert.match(first.user.id, /^usr_[a-z2-7]{20}$/);
  const second = await anon.api.register({ body: { email: "bob@example.com", password } });
  assert.equal(second.user.role, "member");
  assert.equal((await anon.api.serverInfo()).setupRequired, false);
  await rejects(anon.api.register({ body: { email: "ALICE@example.com", password } }), 409, "conflict");
});

test("register and login validate their input and name the bad fields", async (t) => {
  const { url } = await startTestServer(t);
  const cases: [unknown, string[]][] = [
    [{ email: "not-an-email", password }, ["email"]],
    [{ email: "a@example.com", password: "short" }, ["password"]],
    [{ email: "a@example.com", password: "x".repeat(257) }, ["password"]],
    [{ password }, ["email"]],
    [{}, ["email", "password"]],
  ];
  for (const [body, fields] of cases) {
    const res = await raw(`${url}/v1/auth/register`, { method: "POST", json: body });
    assert.equal(res.status, 400, JSON.stringify(body));
    assert.equal(res.body.error.code, "invalid_request");
    assert.deepEqual(
      res.body.error.fields.map((f: { path: string }) => f.path),
      fields,
    );
    for (const field of fields) assert.match(res.body.error.message, new RegExp(field));
  }
  const notJson = await raw(`${url}/v1/auth/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: "{nope",
  });
  assert.equal(notJson.status, 400);
  assert.equal(notJson.body.error.code, "invalid_request");
  const noBody = await raw(`${url}/v1/auth/login`, { method: "POST" });
  assert.equal(noBody.status, 400);
  const text = await raw(`${url}/v1/auth/login`, {
    method: "POST",
    headers: { "content-type": "text/plain" },
    body: "x",
  });
  assert.equal(text.status, 415);
  assert.equal(text.body.error.code, "unsupported_media_type");
  const huge = await raw(`${url}/v1/auth/login`, {
    method: "POST",
    json: { email: "a@b.co", password: "x".repeat(2 * 1024 * 1024) },
  });
  assert.equal(huge.status, 413);
  assert.equal(huge.body.error.code, "payload_too_large");
});

test("browser sessions: HttpOnly SameSite=Lax cookie, whoami, logout ends the session", async (t) => {
  const { url } = await startTestServer(t);
  const reg = await raw(`${url}/v1/auth/register`, {
    method: "POST",
    json: { email: "a@example.com", password },
  });
  assert.equal(reg.status, 201);
  const setCookie = cookieOf(reg.headers);
  assert.match(setCookie, /HttpOnly/i);
  assert.match(setCookie, /SameSite=Lax/i);
  assert.match(setCookie, /Path=\//);
  assert.doesNotMatch(setCookie, /Secure/i, "plain http: no Secure flag");
  assert.equal(reg.body.result.token, undefined, "no API token unless asked for");
  const cookie = setCookie.split(";")[0]!;

  const me = await raw(`${url}/v1/auth/me`, { headers: { cookie } });
  assert.equal(me.status, 200);
  assert.equal(me.body.result.email, "a@example.com");

  const out = await raw(`${url}/v1/auth/logout`, { method: "POST", headers: { cookie } });
  assert.equal(out.status, 200);
  assert.match(cookieOf(out.headers), /Expires=Thu, 01 Jan 1970|Max-Age=0/);
  const after = await raw(`${url}/v1/auth/me`, { headers: { cookie } });
  assert.equal(after.status, 401);
  assert.equal(after.body.error.code, "invalid_token");
});

test("the session cookie is Secure when the server is reached over HTTPS", async (t) => {
  const { url } = await startTestServer(t, { env: { PUBLIC_URL: "https://devices.example.com" } });
  const reg = await raw(`${url}/v1/auth/register`, {
    method: "POST",
    json: { email: "a@example.com", password },
  });
  assert.match(cookieOf(reg.headers), /Secure/);
  assert.equal(reg.body.error, undefined);
});

test("authentication errors carry a stable code and a docs URL", async (t) => {
  const { url, anon, client, user } = await startTestServer(t);
  await user("a@example.com");
  await rejects(anon.api.whoami(), 401, "authentication_required");
  await rejects(client("sdk_not-a-real-token").api.whoami(), 401, "invalid_token");
  await rejects(
    anon.api.login({ body: { email: "a@example.com", password: "wrong password" } }),
    401,
    "invalid_credentials",
  );
  await rejects(
    anon.api.login({ body: { email: "nobody@example.com", password } }),
    401,
    "invalid_credentials",
  );
  const badScheme = await raw(`${url}/v1/auth/me`, { headers: { authorization: "Basic abc" } });
  assert.equal(badScheme.status, 401);
  assert.equal(badScheme.body.error.code, "invalid_token");
  const badCookie = await raw(`${url}/v1/auth/me`, { headers: { cookie: "sdk_session=forged" } });
  assert.equal(badCookie.body.error.code, "invalid_token");
});

test("API tokens: login can return one; create (shown once), list, revoke; logout with a token revokes it", async (t) => {
  const { anon, client, user } = await startTestServer(t);
  const { client: alice } = await user("a@example.com");
  const login = await anon.api.login({
    body: { email: "a@example.com", password, issueToken: true, tokenName: "laptop" },
  });
  assert.ok(login.token);
  assert.match(login.token.token, /^sdk_/);
  assert.equal(login.token.name, "laptop");
  const cli = client(login.token.token);
  assert.equal((await cli.api.whoami()).email, "a@example.com");

  const created = await alice.api.createToken({ body: { name: "CI" } });
  assert.match(created.token, /^sdk_/);
  const listed = await alice.api.listTokens();
  assert.deepEqual(
    listed.map((tk) => tk.name),
    ["CLI", "laptop", "CI"],
  );
  for (const tk of listed)
    assert.equal((tk as Record<string, unknown>).token, undefined, "secrets are never listed");
  assert.ok(listed.find((tk) => tk.name === "laptop")?.lastUsedAt, "last use is recorded");

  const ci = client(created.token);
  assert.equal((await ci.api.whoami()).email, "a@example.com");
  await alice.api.revokeToken({ params: { tokenId: created.id } });
  await rejects(ci.api.whoami(), 401, "invalid_token");
  await rejects(alice.api.revokeToken({ params: { tokenId: created.id } }), 404, "not_found");

  await cli.api.logout();
  await rejects(cli.api.whoami(), 401, "invalid_token");

  const { client: bob } = await user("b@example.com");
  const bobs = await bob.api.createToken({ body: { name: "mine" } });
  await rejects(alice.api.revokeToken({ params: { tokenId: bobs.id } }), 404, "not_found");
  assert.equal((await client(bobs.token).api.whoami()).email, "b@example.com");
});

test("changing the password needs the current one and ends the user's other sessions", async (t) => {
  const { url, anon } = await startTestServer(t);
  await anon.api.register({ body: { email: "a@example.com", password } });
  const login = async () =>
    cookieOf(
      (await raw(`${url}/v1/auth/login`, { method: "POST", json: { email: "a@example.com", password } }))
        .headers,
    ).split(";")[0]!;
  const here = await login();
  const elsewhere = await login();
  const wrong = await raw(`${url}/v1/auth/password`, {
    method: "POST",
    headers: { cookie: here },
    json: { currentPassword: "nope nope nope", newPassword: "a new password" },
  });
  assert.equal(wrong.status, 401);
  assert.equal(wrong.body.error.code, "invalid_credentials");
  const short = await raw(`${url}/v1/auth/password`, {
    method: "POST",
    headers: { cookie: here },
    json: { currentPassword: password, newPassword: "short" },
  });
  assert.equal(short.status, 400);
  const ok = await raw(`${url}/v1/auth/password`, {
    method: "POST",
    headers: { cookie: here },
    json: { currentPassword: password, newPassword: "a new password" },
  });
  assert.equal(ok.status, 200);
  assert.equal((await raw(`${url}/v1/auth/me`, { headers: { cookie: here } })).status, 200);
  assert.equal((await raw(`${url}/v1/auth/me`, { headers: { cookie: elsewhere } })).status, 401);
  await rejects(anon.api.login({ body: { email: "a@example.com", password } }), 401, "invalid_credentials");
  assert.equal(
    (await anon.api.login({ body: { email: "a@example.com", password: "a new password" } })).user.email,
    "a@example.com",
  );
});

test("sessions expire after SESSION_MAX_AGE_DAYS", async (t) => {
  const { TestClock } = await import("./helpers/clock.ts");
  const clock = new TestClock();
  const { url } = await startTestServer(t, { clock, env: { SESSION_MAX_AGE_DAYS: "2" } });
  const reg = await raw(`${url}/v1/auth/register`, {
    method: "POST",
    json: { email: "a@example.com", password },
  });
  const cookie = cookieOf(reg.headers).split(";")[0]!;
  clock.advance(2 * 86_400_000 - 1000);
  assert.equal((await raw(`${url}/v1/auth/me`, { headers: { cookie } })).status, 200);
  clock.advance(2000);
  assert.equal((await raw(`${url}/v1/auth/me`, { headers: { cookie } })).status, 401);
});

test("ALLOW_REGISTRATION=false: the first (admin) account can still register, then sign-up is closed", async (t) => {
  const { anon } = await startTestServer(t, { env: { ALLOW_REGISTRATION: "false" } });
  assert.equal((await anon.api.serverInfo()).registrationOpen, true, "open until an admin exists");
  const admin = await anon.api.register({ body: { email: "admin@example.com", password } });
  assert.equal(admin.user.role, "admin");
  assert.equal((await anon.api.serverInfo()).registrationOpen, false);
  await rejects(
    anon.api.register({ body: { email: "late@example.com", password } }),
    403,
    "registration_closed",
  );
  assert.equal((await anon.api.login({ body: { email: "admin@example.com", password } })).user.role, "admin");
});

test("cookie-authenticated writes from another site are refused; same-origin and non-browser clients work", async (t) => {
  const { url } = await startTestServer(t);
  const reg = await raw(`${url}/v1/auth/register`, {
    method: "POST",
    json: { email: "a@example.com", password },
  });
  const cookie = cookieOf(reg.headers).split(";")[0]!;
  const create = (headers: Record<string, string>) =>
    raw(`${url}/v1/projects`, { method: "POST", headers: { cookie, ...headers }, json: { name: "p" } });

  const evil = await create({ origin: "https://evil.example" });
  assert.equal(evil.status, 403);
  assert.equal(evil.body.error.code, "cross_site_request");
  assert.equal((await create({ "sec-fetch-site": "cross-site" })).status, 403);
  assert.equal((await create({ "sec-fetch-site": "same-site" })).status, 403);
  assert.equal((await create({ origin: "null" })).status, 403);
  const login = await raw(`${url}/v1/auth/login`, {
    method: "POST",
    headers: { origin: "https://evil.example" },
    json: { email: "a@example.com", password },
  });
  assert.equal(login.status, 403, "login CSRF is refused too");

  assert.equal((await create({ origin: url })).status, 201);
  assert.equal((await create({ "sec-fetch-site": "same-origin" })).status, 201);
  assert.equal((await create({})).status, 201, "curl-like clients send no Origin");
  const read = await raw(`${url}/v1/projects`, { headers: { cookie, origin: "https://evil.example" } });
  assert.equal(read.status, 200, "reads are not state-changing");
  assert.equal(read.body.result.length, 3);
});
