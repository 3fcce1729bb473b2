import assert from "node:assert/strict";
import { test } from "node:test";
import { waitUntil } from "@sdk/test-helpers";
import { startTestServer } from "./helpers/server.ts";
import { basic, hello, openSocket, wsUrl } from "./helpers/sockets.ts";

// A `before` that names no entry of the list being read is refused, never answered with an empty
// or newest page; another device's entry reads exactly like an unknown id.

test("logs, state history and the audit log refuse a `before` that is not an entry of that list", async (t) => {
  const server = await startTestServer(t);
  const { client } = await server.user(); // the first account: an admin
  const project = await client.api.createProject({ body: { name: "p" } });
  const devices = [];
  for (const name of ["a", "b"]) {
    const { device, credentials } = await client.api.createDevice({
      params: { projectId: project.id },
      body: { name, board: "pico_w" },
    });
    const socket = await openSocket(t, wsUrl(server.url, "/v1/device"), {
      headers: basic(device.id, credentials.secret),
    });
    socket.send(hello());
    await socket.inbox.type("welcome");
    socket.send({ type: "log", level: "info", message: `hello from ${name}` });
    socket.send({ type: "state", entityId: "temperature", value: 20 });
    socket.send({ type: "state", entityId: "humidity", value: 50 });
    devices.push({ projectId: project.id, deviceId: device.id });
  }
  const [a, b] = devices as [(typeof devices)[0], (typeof devices)[0]];
  const logsOf = (ids: typeof a, before?: string) =>
    client.api.listDeviceLogs({ params: ids, query: before === undefined ? {} : { before } });
  await waitUntil(async () => (await logsOf(b)).some((l) => l.message === "hello from b"));
  await waitUntil(
    async () => (await client.api.getStateHistory({ params: { ...a, entityId: "humidity" } })).length === 1,
  );

  const refused = (list: string) => (error: any) => {
    assert.equal(error.status, 400);
    assert.equal(error.code, "invalid_request");
    assert.equal(
      error.message,
      `Invalid request: before is not the id of an entry in ${list}; it may have been pruned, so ask again without before to start from the newest entry`,
    );
    assert.deepEqual(error.fields, [{ path: "before", message: `is not the id of an entry in ${list}` }]);
    return true;
  };

  const logOfB = (await logsOf(b))[0]!.id;
  const unknownLog = `${logOfB.slice(0, -1)}${logOfB.endsWith("a") ? "b" : "a"}`;
  await assert.rejects(logsOf(a, unknownLog), refused("this device's log"));
  await assert.rejects(logsOf(a, logOfB), refused("this device's log"), "another device's entry");
  await assert.rejects(logsOf(a, "nonsense"), refused("this device's log"));
  const ownLog = (await logsOf(a)).at(-1)!.id;
  assert.deepEqual(await logsOf(a, ownLog), [], "the oldest entry of its own log pages to nothing");

  const history = (ids: typeof a, entityId: string, before: string) =>
    client.api.getStateHistory({ params: { ...ids, entityId }, query: { before } });
  const [temperatureOfB] = await client.api.getStateHistory({ params: { ...b, entityId: "temperature" } });
  const [humidityOfA] = await client.api.getStateHistory({ params: { ...a, entityId: "humidity" } });
  await assert.rejects(history(a, "temperature", temperatureOfB!.id), refused("the history of temperature"));
  await assert.rejects(history(a, "temperature", humidityOfA!.id), refused("the history of temperature"));
  assert.deepEqual(await history(a, "humidity", humidityOfA!.id), []);

  await assert.rejects(client.api.listAudit({ query: { before: unknownLog } }), refused("the audit log"));
});
