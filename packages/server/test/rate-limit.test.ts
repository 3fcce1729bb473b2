import assert from "node:assert/strict";
import { test } from "node:test";
import { TestClock } from "./helpers/clock.ts";
import { raw, startTestServer } from "./helpers/server.ts";

const password = "correct horse battery";
const env = { RATE_LIMIT_MAX_ATTEMPTS: "3", RATE_LIMIT_WINDOW_SECONDS: "60" };

function assertLimited(res: { status: number; headers: Headers; body: any }, maxWait: number) {
  assert.equal(res.status, 429);
  assert.equal(res.body.success, false);
  assert.equal(res.body.error.message, "Rate limit exceeded");
  assert.equal(res.body.error.code, "rate_limited");
  assert.match(res.body.error.docs, /\/docs\/errors#rate_limited$/);
  const retryAfter = Number(res.headers.get("retry-after"));
  assert.ok(retryAfter >= 1 && retryAfter <= maxWait, `Retry-After ${retryAfter}`);
}

test("failed logins: the window closes after the limit and opens again after the wait", async (t) => {
  const clock = new TestClock();
  const { url, anon } = await startTestServer(t, { clock, env });
  await anon.api.register({ body: { email: "a@example.com", password } });
  const login = (pw: string, email = "a@example.com") =>
    raw(`${url}/v1/auth/login`, { method: "POST", json: { email, password: pw } });

  for (let i = 0; i < 3; i++) assert.equal((await login("wrong password")).status, 401);
  assertLimited(await login("wrong password"), 60);
  assertLimited(await login(password), 60); // even the right password waits: that is the point

  clock.advance(30_000);
  assertLimited(await login(password), 30);
  clock.advance(30_001);
  assert.equal((await login(password)).status, 200, "retrying after the wait works");
});

test("the limit is per account as well as per client address", async (t) => {
  const clock = new TestClock();
  const { url, anon } = await startTestServer(t, { clock, env: { ...env, TRUST_PROXY: "true" } });
  await anon.api.register({ body: { email: "a@example.com", password } });
  await anon.api.register({ body: { email: "b@example.com", password } });
  const login = (email: string, pw: string, ip: string) =>
    raw(`${url}/v1/auth/login`, {
      method: "POST",
      headers: { "x-forwarded-for": ip },
      json: { email, password: pw },
    });

  // one account attacked from many addresses
  for (let i = 0; i < 3; i++)
    assert.equal((await login("a@example.com", "wrong password", `10.0.0.${i}`)).status, 401);
  assertLimited(await login("a@example.com", password, "10.0.0.99"), 60);
  // another account from a fresh address is not affected
  assert.equal((await login("b@example.com", password, "10.0.1.1")).status, 200);

  // one address trying many accounts
  for (let i = 0; i < 3; i++)
    assert.equal((await login(`ghost${i}@example.com`, "x", "10.0.2.2")).status, 401);
  assertLimited(await login("b@example.com", password, "10.0.2.2"), 60);
  assert.equal((await login("b@example.com", password, "10.0.2.3")).status, 200);
});

test("a successful login clears the account's failures", async (t) => {
  const clock = new TestClock();
  const { url, anon } = await startTestServer(t, { clock, env: { ...env, TRUST_PROXY: "true" } });
  await anon.api.register({ body: { email: "a@example.com", password } });
  const login = (pw: string, ip: string) =>
    raw(`${url}/v1/auth/login`, {
      method: "POST",
      headers: { "x-forwarded-for": ip },
      json: { email: "a@example.com", password: pw },
    });
  for (let i = 0; i < 2; i++) assert.equal((await login("wrong password", "10.0.0.1")).status, 401);
  assert.equal((await login(password, "10.0.0.2")).status, 200);
  for (let i = 0; i < 2; i++) assert.equal((await login("wrong password", "10.0.0.3")).status, 401);
  assert.equal((await login(password, "10.0.0.4")).status, 200);
});

test("registration attempts are limited per client address", async (t) => {
  const clock = new TestClock();
  const { url } = await startTestServer(t, { clock, env });
  const register = (i: number) =>
    raw(`${url}/v1/auth/register`, { method: "POST", json: { email: `u${i}@example.com`, password } });
  for (let i = 0; i < 3; i++) assert.equal((await register(i)).status, 201);
  assertLimited(await register(3), 60);
  clock.advance(60_001);
  assert.equal((await register(3)).status, 201);
});

test("no other route is rate limited", async (t) => {
  const clock = new TestClock();
  const { url, user } = await startTestServer(t, { clock, env });
  const { client } = await user("a@example.com");
  const headers = { authorization: `Bearer ${client.token}` };
  for (let i = 0; i < 20; i++) {
    assert.equal((await raw(`${url}/v1/projects`, { headers })).status, 200);
    assert.equal(
      (await raw(`${url}/v1/auth/me`, { headers: { authorization: "Bearer sdk_wrong" } })).status,
      401,
    );
    assert.equal((await raw(`${url}/health`)).status, 200);
  }
  assert.equal(
    (await raw(`${url}/v1/projects`, { method: "POST", headers, json: { name: "still fine" } })).status,
    201,
  );
});
