import assert from "node:assert/strict";
import net from "node:net";
import { type TestContext, test } from "node:test";
import { errorCatalog, isErrorCode } from "@sdk/protocol";
import { type FastifyError, errorCodes as fastifyErrorCodes } from "fastify";
import { toAppError } from "../src/http/error-handler.ts";
import { scriptProject } from "./helpers/script-project.ts";
import { raw } from "./helpers/server.ts";
import { basic, hello, openSocket, wsUrl } from "./helpers/sockets.ts";

async function setup(t: TestContext) {
  const s = await scriptProject(t);
  const { device, credentials } = await s.addDevice();
  const headers = { authorization: `Bearer ${s.auth.token!.token}` };
  const call = (path: string, init: RequestInit & { json?: unknown } = {}) =>
    raw(s.url + path, { ...init, headers: { ...headers, ...(init.headers as object) } });
  return { ...s, device, credentials, call, p: `/v1/projects/${s.project.id}` };
}

function assertEnvelope(body: any, code: string, message?: RegExp) {
  assert.equal(body.success, false, JSON.stringify(body));
  assert.equal(body.error.code, code, JSON.stringify(body));
  assert.ok(isErrorCode(body.error.code));
  assert.match(body.error.docs, new RegExp(`/docs/errors#${code}$`));
  if (message) assert.match(body.error.message, message);
}

// Setup mistakes of the program, not of a request, whatever status Fastify gives them.
const setupErrors = new Set(["FST_ERR_CTP_INSTANCE_ALREADY_STARTED"]);

test("every Fastify error class maps to a catalogued code with a status of the same kind", () => {
  const entries = Object.entries(fastifyErrorCodes);
  assert.ok(entries.length > 50, "fastify exports its error classes");
  for (const [name, ErrorClass] of entries) {
    const error = new (ErrorClass as new (...a: string[]) => FastifyError)("a", "b", "c");
    const app = toAppError(error);
    assert.ok(isErrorCode(app.code), `${name} → ${app.code}`);
    assert.equal(app.status, errorCatalog[app.code].status);
    const status = error.statusCode ?? 500;
    if (status >= 500 || setupErrors.has(name)) {
      assert.equal(app.code, "internal_error", `${name} (${status}) is the server's own fault`);
    } else if ([404, 413, 415].includes(status)) {
      assert.equal(app.status, status, `${name}`);
    } else {
      assert.equal(app.status, 400, `${name} (${status}) is the request's fault`);
      assert.doesNotMatch(app.message, /FST_|'a'/, `${name}: a message for people`);
    }
  }
});

test("a request error from outside Fastify keeps its status as the catalogued code", () => {
  const withStatus = (statusCode: number) =>
    toAppError(Object.assign(new Error("plugin says no"), { statusCode }) as FastifyError);
  for (const [status, code] of [
    [401, "authentication_required"],
    [403, "forbidden"],
    [404, "not_found"],
    [409, "conflict"],
    [410, "gone"],
    [413, "payload_too_large"],
    [415, "unsupported_media_type"],
    [429, "rate_limited"],
  ] as const) {
    const app = withStatus(status);
    assert.equal(app.code, code, `${status}`);
    assert.equal(app.status, status);
  }
  assert.equal(withStatus(400).code, "invalid_request");
  assert.match(withStatus(422).message, /^Invalid request: plugin says no$/);
  assert.equal(withStatus(500).code, "internal_error");
});

test("framework errors, unknown routes and plain requests to WebSocket paths answer in the envelope", async (t) => {
  const s = await setup(t);
  const long = await s.call(`${s.p}/env/${"A".repeat(200)}`, { method: "PUT", json: { value: "x" } });
  assert.equal(long.status, 400);
  assertEnvelope(long.body, "invalid_request", /longer than 100 characters/);
  const badUrl = await s.call("/v1/projects/%E0%A4%A");
  assert.equal(badUrl.status, 400);
  assertEnvelope(badUrl.body, "invalid_request", /percent-encoding/);
  assertEnvelope((await s.call("/v1/nothing")).body, "not_found");
  const watch = await s.call(`${s.p}/devices/${s.device.id}/watch`);
  assert.equal(watch.status, 426);
  assertEnvelope(watch.body, "upgrade_required", /WebSocket client/);
  const device = await raw(`${s.url}/v1/device`, { headers: basic(s.device.id, s.credentials.secret) });
  assert.equal(device.status, 426);
  assertEnvelope(device.body, "upgrade_required");
});

test("a malformed WebSocket handshake is refused in the envelope, not ws's plain text", async (t) => {
  const s = await setup(t);
  const { port } = new URL(s.url);
  const answer = await new Promise<string>((resolve, reject) => {
    const socket = net.connect(Number(port), "127.0.0.1", () => {
      socket.write(
        `GET /v1/device HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
          `Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 7\r\n` +
          `Authorization: ${basic(s.device.id, s.credentials.secret).authorization}\r\n\r\n`,
      );
    });
    let text = "";
    socket.on("data", (d) => (text += d));
    socket.on("end", () => resolve(text));
    socket.on("error", reject);
  });
  assert.match(answer, /^HTTP\/1\.1 400 /);
  const body = JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4));
  assertEnvelope(body, "upgrade_required", /Sec-WebSocket-Version/);
});

test("request bodies: invalid UTF-8, prototype keys, deep nesting and non-finite numbers are refused plainly", async (t) => {
  const s = await setup(t);
  const post = (body: string | Uint8Array) =>
    s.call("/v1/projects", { method: "POST", headers: { "content-type": "application/json" }, body });
  const utf8 = await post(new Uint8Array([...Buffer.from('{"name":"'), 0xff, ...Buffer.from('"}')]));
  assertEnvelope(utf8.body, "invalid_request", /not valid UTF-8/);
  const proto = await post('{"name":"x","__proto__":{"admin":true}}');
  assertEnvelope(proto.body, "invalid_request", /"__proto__".*refused.*prototype/);
  const deep = await post(`{"name":${"[".repeat(30_000)}${"]".repeat(30_000)}}`);
  assertEnvelope(deep.body, "invalid_request", /deeper than 64 levels/);
  const message = await s.call(`${s.p}/devices/${s.device.id}/messages`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: '{"type":"x","n":1e999}',
  });
  assertEnvelope(message.body, "invalid_request", /n: JSON numbers must be finite/);
  const notJson = await post("{");
  assertEnvelope(notJson.body, "invalid_request", /not valid JSON/);
});

test("names and values: one rule on every REST path, each field named once", async (t) => {
  const s = await setup(t);
  const refused: [string, RegExp][] = [
    ["", /^Invalid request: name must not be empty/],
    ["\u200b\u200d\u2060", /must not be empty or made only of spaces and invisible characters/],
    ["invoice\u202egnp.exe", /bidirectional controls/],
    ["a\ud800", /lone surrogate/],
    ["a\u0007b", /control characters/],
  ];
  for (const [name, message] of refused) {
    for (const path of ["/v1/projects", `${s.p}/devices`, "/v1/tokens"]) {
      const r = await s.call(path, { method: "POST", json: { name, board: "pico_w" } });
      assert.equal(r.status, 400, `${path} ${JSON.stringify(name)}`);
      assertEnvelope(r.body, "invalid_request", message);
      assert.doesNotMatch(r.body.error.message, /name name/);
    }
  }
  const nfc = await s.client.api.createProject({ body: { name: "  Cafe\u0301  " } });
  assert.equal(nfc.name, "Caf\u00e9");
  const emoji = await s.client.api.createProject({ body: { name: "👩‍💻 lab" } });
  assert.equal(emoji.name, "👩‍💻 lab");
  const nul = await s.call(`${s.p}/env/FOO`, { method: "PUT", json: { value: "a\u0000b" } });
  assertEnvelope(nul.body, "invalid_request", /NUL/);
  const noBoard = await s.call(`${s.p}/devices`, { method: "POST", json: { name: "d2" } });
  assertEnvelope(noBoard.body, "invalid_request", /^Invalid request: board is required$/);
  const noMode = await s.call(`${s.p}/devices/${s.device.id}/commands`, {
    method: "POST",
    json: { type: "pin_mode", args: { pin: 2 } },
  });
  assert.equal(noMode.status, 400);
  assert.equal(noMode.body.error.message, "mode is required");
});

test("device frames: too deep or non-finite values end in a protocol error and count as bad", async (t) => {
  const s = await setup(t);
  const dev = await openSocket(t, wsUrl(s.url, "/v1/device"), {
    headers: basic(s.device.id, s.credentials.secret),
  });
  dev.send(hello());
  await dev.inbox.type("welcome");
  dev.ws.send(`{"type":"state","entityId":"deep","value":${"[".repeat(30_000)}${"]".repeat(30_000)}}`);
  const deep = await dev.inbox.next((m) => m.type === "error");
  assert.equal(deep.code, "malformed");
  assert.match(deep.message, /deeper than 64 levels/);
  dev.ws.send('{"type":"state","entityId":"big","value":1e999}');
  const big = await dev.inbox.next((m) => m.type === "error" && m !== deep);
  assert.equal(big.code, "invalid_message");
  assert.match(big.message, /value: JSON numbers must be finite/);
  const state = await s.client.api.getDeviceState({
    params: { projectId: s.project.id, deviceId: s.device.id },
  });
  assert.deepEqual(state, []);
  const logs = await s.client.api.listDeviceLogs({
    params: { projectId: s.project.id, deviceId: s.device.id },
    query: {},
  });
  assert.equal(logs.filter((l: { message: string }) => /protocol error/.test(l.message)).length, 2);
});
