import assert from "node:assert/strict";
import { test } from "node:test";
import { type Endpoint, endpoints, errorCodes } from "@sdk/protocol";
import { raw, startTestServer } from "./helpers/server.ts";

test("/docs/errors has an anchor for every code, so every docs URL resolves", async (t) => {
  const { url } = await startTestServer(t);
  const res = await raw(`${url}/docs/errors`);
  assert.equal(res.status, 200);
  assert.match(res.headers.get("content-type") ?? "", /text\/html/);
  for (const code of errorCodes) assert.ok(res.body.includes(`id="${code}"`), code);
  assert.ok(res.body.includes("Rate limit exceeded"));
  assert.ok(
    !/https?:\/\/(?!localhost)/.test(res.body.replace(/<a href="\/[^"]*"/g, "")),
    "no external resources",
  );
});

test("the old changelog URL moves permanently to /docs/changelog, which shows docs/changelog.md", async (t) => {
  const { url } = await startTestServer(t);
  const old = await raw(`${url}/changelog`);
  assert.equal(old.status, 301);
  assert.equal(old.headers.get("location"), "/docs/changelog");
  const page = await raw(`${url}/docs/changelog`);
  assert.equal(page.status, 200);
  assert.match(page.body, /<h1[^>]*>Changelog<\/h1>/);
  const index = await raw(`${url}/docs`);
  assert.equal(index.status, 200);
  assert.match(index.body, /href="\/docs\/changelog"/);
  const missing = await raw(`${url}/docs/nothing-here`);
  assert.equal(missing.status, 404);
  assert.equal(missing.body.error.code, "not_found");
  assert.equal((await raw(`${url}/docs/..%2Fpackage`)).status, 404);
});

test("GET /logs/stream is gone: 410 pointing at the watch WebSocket", async (t) => {
  const { url } = await startTestServer(t);
  const res = await raw(`${url}/logs/stream`);
  assert.equal(res.status, 410);
  assert.equal(res.body.success, false);
  assert.equal(res.body.error.code, "gone");
  assert.match(res.body.error.message, /\/v1\/projects\/:projectId\/devices\/:deviceId\/watch/);
  assert.match(res.body.error.docs, /\/docs\/errors#gone$/);
});

test("unknown routes answer the 404 envelope", async (t) => {
  const { url } = await startTestServer(t);
  for (const [method, path] of [
    ["GET", "/v1/nothing"],
    ["POST", "/v1/projects/x/y/z"],
    ["DELETE", "/health"],
  ] as const) {
    const res = await raw(`${url}${path}`, { method });
    assert.equal(res.status, 404, `${method} ${path}`);
    assert.deepEqual(Object.keys(res.body.error).sort(), ["code", "docs", "message"]);
    assert.equal(res.body.error.code, "not_found");
  }
});

test("/v1/openapi.json describes every endpoint of the table, generated from the schemas", async (t) => {
  const { url } = await startTestServer(t);
  const res = await raw(`${url}/v1/openapi.json`);
  assert.equal(res.status, 200);
  assert.equal(res.body.openapi, "3.0.3");
  for (const [name, spec] of Object.entries(endpoints) as [string, Endpoint][]) {
    const op = res.body.paths[spec.path.replace(/:(\w+)/g, "{$1}")]?.[spec.method.toLowerCase()];
    assert.ok(op, `${spec.method} ${spec.path}`);
    assert.equal(op.operationId, name);
    const bodyType = spec.binary === "body" ? "application/octet-stream" : "application/json";
    if (spec.body) assert.ok(op.requestBody.content[bodyType].schema, name);
  }
  const register = res.body.paths["/v1/auth/register"].post;
  const schema = register.requestBody.content["application/json"].schema;
  assert.deepEqual(schema.required.sort(), ["email", "password"]);
  assert.equal(schema.properties.password.minLength, 8);
  assert.equal(schema.properties.password.maxLength, 256);
});
