import assert from "node:assert/strict";
import { test } from "node:test";
import { mintSignInToken, newSignInLinkKey } from "@sdk/protocol/sign-in-link";
import { loadConfig } from "@sdk/server/config";
import { startTestServer } from "@sdk/test-helpers";

const get = (url: string, cookie?: string) =>
  fetch(url, { redirect: "manual", headers: cookie ? { cookie } : {} });

test("without SIGN_IN_LINK_KEY there is no sign-in link route", async (t) => {
  const s = await startTestServer(t);
  await s.user("admin@example.com");
  const key = newSignInLinkKey();
  const response = await get(
    `${s.url}/sign-in-link?token=${mintSignInToken(key, "admin@example.com", 60_000)}`,
  );
  assert.equal(response.status, 404);
  assert.equal(response.headers.get("set-cookie"), null);
});

test("a sign-in link opens a session for the admin once; expired, forged and member links do not", async (t) => {
  const key = newSignInLinkKey();
  const s = await startTestServer(t, { env: { SIGN_IN_LINK_KEY: key } });
  await s.user("admin@example.com"); // the first account: admin
  await s.user("member@example.com");
  const link = (token: string) => `${s.url}/sign-in-link?token=${encodeURIComponent(token)}`;

  const token = mintSignInToken(key, "admin@example.com", 60_000);
  const ok = await get(link(token));
  assert.equal(ok.status, 303);
  assert.equal(ok.headers.get("location"), "/");
  assert.equal(ok.headers.get("cache-control"), "no-store");
  const cookie = /^(sdk_session=[^;]+);.*HttpOnly/i.exec(ok.headers.get("set-cookie") ?? "")?.[1];
  assert.ok(cookie, "a session cookie, httpOnly");
  const who = await get(`${s.url}/v1/auth/me`, cookie);
  assert.equal(who.status, 200);
  assert.equal(
    JSON.stringify(await who.json()).includes("admin@example.com"),
    true,
    "signed in as the admin",
  );

  const refused = async (url: string, why: string) => {
    const response = await get(url);
    assert.equal(response.status, 401, why);
    assert.equal(response.headers.get("set-cookie"), null, why);
    assert.match(await response.text(), /This sign-in link cannot be used/, why);
  };
  await refused(link(token), "a second use");
  await refused(link(mintSignInToken(key, "admin@example.com", 60_000, Date.now() - 61_000)), "expired");
  await refused(link(mintSignInToken(newSignInLinkKey(), "admin@example.com", 60_000)), "another key");
  await refused(link(mintSignInToken(key, "member@example.com", 60_000)), "not the admin");
  await refused(link(mintSignInToken(key, "nobody@example.com", 60_000)), "no such account");
  await refused(`${s.url}/sign-in-link`, "no token");
  await refused(link("not.a-token"), "garbage");
});

test("SIGN_IN_LINK_KEY must be long enough to be a key", () => {
  assert.throws(() => loadConfig({ SIGN_IN_LINK_KEY: "short" }), /SIGN_IN_LINK_KEY must be at least 32/);
  assert.equal(loadConfig({}).signInLinkKey, null);
});
