// The REST client against a real server: results unwrapped, the error envelope as a typed error,
// the API token as a Bearer header, and what it says when no sdk server answers.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { SdkApiError, SdkClient, SdkNetworkError } from "@sdk/client";
import { type ServerProcess, startServer } from "./helpers/server.ts";

let server: ServerProcess;
let token: string;

before(async () => {
  server = await startServer();
  const anon = new SdkClient({ baseUrl: server.url });
  const auth = await anon.api.register({
    body: { email: "admin@example.com", password: "correct horse battery", issueToken: true },
  });
  token = auth.token!.token;
});
after(() => server.dispose());

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => assert.fail("expected the call to fail"),
    (error: unknown) => error,
  );
}

test("a call resolves with the result, unwrapped from the success envelope", async () => {
  const client = new SdkClient({ baseUrl: `${server.url}/` });
  assert.equal(client.baseUrl, server.url, "a trailing slash is dropped");
  const info = await client.api.serverInfo();
  assert.equal(info.setupRequired, false);
  assert.equal(typeof info.version, "string");
  assert.deepEqual(await client.health(), { status: "ok" });
});

test("the API token travels as a Bearer header; setToken switches it", async () => {
  const client = new SdkClient({ baseUrl: server.url, token });
  assert.equal((await client.api.whoami()).email, "admin@example.com");

  client.setToken(undefined);
  const anonymous = await rejection(client.api.whoami());
  assert.ok(anonymous instanceof SdkApiError);
  assert.equal(anonymous.status, 401);
  assert.equal(anonymous.code, "authentication_required");

  client.setToken("sdk_not-a-real-token");
  const wrong = await rejection(client.api.whoami());
  assert.ok(wrong instanceof SdkApiError);
  assert.equal(wrong.status, 401);
  assert.equal(wrong.code, "invalid_token");

  client.setToken(token);
  assert.equal(client.token, token);
  assert.equal((await client.api.whoami()).email, "admin@example.com");
});

test("an error envelope becomes an SdkApiError with status, code, message and an absolute docs URL", async () => {
  const client = new SdkClient({ baseUrl: server.url, token });
  const error = await rejection(client.api.getProject({ params: { projectId: "prj_missing" } }));
  assert.ok(error instanceof SdkApiError);
  assert.equal(error.name, "SdkApiError");
  assert.equal(error.status, 404);
  assert.equal(error.code, "not_found");
  assert.ok(error.message.length > 0);
  assert.equal(error.docs, `${server.url}/docs/errors#not_found`);
});

test("a rejected body names its fields", async () => {
  const client = new SdkClient({ baseUrl: server.url, token });
  const error = await rejection(client.api.createProject({ body: { name: "" } }));
  assert.ok(error instanceof SdkApiError);
  assert.equal(error.status, 400);
  assert.equal(error.code, "invalid_request");
  assert.deepEqual(
    error.fields?.map((f) => f.path),
    ["name"],
  );
});

test("path parameters are encoded, and a missing one fails before any request", async () => {
  const client = new SdkClient({ baseUrl: server.url, token });
  const project = await client.api.createProject({ body: { name: "Greenhouse" } });
  assert.equal((await client.api.getProject({ params: { projectId: project.id } })).name, "Greenhouse");
  const odd = await rejection(client.api.getProject({ params: { projectId: "a/b?c" } }));
  assert.ok(odd instanceof SdkApiError);
  assert.equal(odd.status, 404);
  await assert.rejects(client.call("getProject", { params: {} } as never), {
    name: "TypeError",
    message: "getProject: missing path parameter projectId",
  });
});

test("no server at the address: SdkNetworkError naming it", async () => {
  const stopped = await startServer();
  await stopped.dispose();
  const client = new SdkClient({ baseUrl: stopped.url });
  const error = await rejection(client.api.serverInfo());
  assert.ok(error instanceof SdkNetworkError);
  assert.equal(error.url, `${stopped.url}/v1/server`);
  assert.match(error.message, /Could not reach http:\/\/127\.0\.0\.1:\d+/);
});

test("a call given a signal gives up when it aborts: SdkNetworkError saying why", async () => {
  // A fetch that never answers, like a server that hangs, until the signal aborts.
  const hanging: typeof fetch = (_url, init) =>
    new Promise((_, reject) => {
      const signal = init?.signal;
      if (signal?.aborted) reject(signal.reason);
      signal?.addEventListener("abort", () => reject(signal.reason));
    });
  const client = new SdkClient({ baseUrl: "http://127.0.0.1:9", fetch: hanging });
  const timedOut = await rejection(client.api.serverInfo({ signal: AbortSignal.timeout(10) }));
  assert.ok(timedOut instanceof SdkNetworkError);
  assert.match(timedOut.message, /No answer from http:\/\/127\.0\.0\.1:9: the request timed out/);
  const abandoned = await rejection(client.api.serverInfo({ signal: AbortSignal.abort() }));
  assert.ok(abandoned instanceof SdkNetworkError);
  assert.match(abandoned.message, /the call was abandoned/);
});

test("an answer that is not the API (HTML): SdkNetworkError, not a parse error", async () => {
  const client = new SdkClient({ baseUrl: server.url });
  const error = await rejection(client.request("GET", "/docs/errors"));
  assert.ok(error instanceof SdkNetworkError);
  assert.match(error.message, /without JSON: is this an sdk server\?/);
});
