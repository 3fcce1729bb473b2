import assert from "node:assert/strict";
import { test } from "node:test";
import { WatchEvent } from "@sdk/protocol";
import { deployScript, waitUntil } from "@sdk/test-helpers";
import { toRecordEvent } from "../src/ws/watch-events.ts";
import { scriptProject } from "./helpers/script-project.ts";
import { openSocket, wsUrl } from "./helpers/sockets.ts";

const script = `
import { DeviceScript, GP26 } from "@sdk/device";
export default class Recorded extends DeviceScript {
  async onMessage(msg) {
    if (msg.type === "sample") {
      const { volts } = await this.env.DEVICE.adcRead(GP26);
      this.env.DEVICE.emitState("voltage", volts);
    }
    if (msg.type === "show") {
      this.env.DEVICE.send({ type: "display_text", text: "shown" });
      console.log("shown");
    }
  }
}
`;

const recordKinds = new Set(["message", "command", "send"]);

test("watch ?record=true: message, command (with its answer and source), state and send, in order", async (t) => {
  const s = await scriptProject(t);
  await deployScript(t, s.client, s.project.id, script);
  const { sim, device, ids } = await s.addDevice();
  sim.setVoltage(26, 1.65);
  const path = `/v1/projects/${s.project.id}/devices/${device.id}/watch`;
  const headers = { authorization: `Bearer ${s.client.token}` };
  const recorder = await openSocket(t, wsUrl(s.url, `${path}?record=true`), { headers });
  const plain = await openSocket(t, wsUrl(s.url, path), { headers });
  await recorder.inbox.type("snapshot");
  await plain.inbox.type("snapshot");

  sim.start();
  const online = await recorder.inbox.next((m) => m.type === "status" && m.status === "online");
  assert.equal(online.board, "pico_w", "the online status names the board of the hello");
  assert.equal(typeof online.firmware, "string");
  await waitUntil(() => s.running() !== null, 10_000, "the script running");

  sim.sendEvent("sample", { n: 1 });
  await recorder.inbox.next((m) => m.type === "state" && m.entityId === "voltage");
  sim.sendEvent("show");
  await recorder.inbox.type("send");
  // The plain watcher hears the log line the script wrote after its send: had `send` been
  // forwarded to it, it would have come before.
  await plain.inbox.next((m) => m.type === "log" && m.entry.message === "shown");

  const recorded = recorder.inbox.messages.filter((m) => recordKinds.has(m.type) || m.type === "state");
  assert.deepEqual(
    recorded.map((m) => m.type),
    ["message", "command", "state", "message", "send"],
  );
  const [sample, command, state, show, send] = recorded;
  assert.deepEqual(sample.message, { type: "sample", n: 1 });
  assert.equal(command.source, "script");
  assert.equal(command.command, "adc_read");
  assert.deepEqual(command.args, { pin: 26 });
  assert.equal(command.result.ok, true);
  assert.equal(command.result.value.volts, state.value);
  assert.ok(command.ms >= 0);
  assert.deepEqual(show.message, { type: "show" });
  assert.deepEqual(send.message, { type: "display_text", text: "shown" });

  // A message a user sends the script over REST is a message event too.
  await s.client.api.sendDeviceMessage({ params: ids, body: { type: "from_api", n: 2 } });
  const fromApi = await recorder.inbox.next((m) => m.type === "message" && m.message.type === "from_api");
  assert.deepEqual(fromApi.message, { type: "from_api", n: 2 });

  // A command a user sends over REST is an event too, marked `api`.
  await s.client.api.sendDeviceCommand({ params: ids, body: { type: "gpio_read", args: { pin: 15 } } });
  const api = await recorder.inbox.next((m) => m.type === "command" && m.source === "api");
  assert.equal(api.command, "gpio_read");
  assert.equal(api.result.ok, true);

  const seqs = recorder.inbox.messages.map((m) => m.seq);
  assert.deepEqual(
    seqs,
    seqs.map((_, i) => i + 1),
    "seq counts up from 1 without gaps",
  );
  for (const m of recorder.inbox.messages)
    assert.ok(WatchEvent.safeParse(m).success, `every event matches the schema: ${JSON.stringify(m)}`);
  assert.deepEqual(
    plain.inbox.messages.filter((m) => recordKinds.has(m.type)),
    [],
    "without ?record=true: no message, command or send events",
  );
});

test("watch ?record=true: the same access as any watch; bad values are refused", async (t) => {
  const s = await scriptProject(t);
  const { device } = await s.addDevice();
  const path = `/v1/projects/${s.project.id}/devices/${device.id}/watch?record=true`;
  const other = await s.user();
  await assert.rejects(
    openSocket(t, wsUrl(s.url, path), { headers: { authorization: `Bearer ${other.client.token}` } }),
    (e: any) => e.status === 404 && e.body.error.code === "not_found",
  );
  await assert.rejects(
    openSocket(t, wsUrl(s.url, `/v1/projects/${s.project.id}/devices/${device.id}/watch?record=yes`), {
      headers: { authorization: `Bearer ${s.client.token}` },
    }),
    (e: any) => e.status === 400 && e.body.error.code === "invalid_request",
  );
});

test("watch ?record=true: commands refused before reaching the device are events too (ms 0); a message's `at` is when it came", async (t) => {
  const s = await scriptProject(t);
  const { sim, device, ids } = await s.addDevice();
  const path = `/v1/projects/${s.project.id}/devices/${device.id}/watch?record=true`;
  const recorder = await openSocket(t, wsUrl(s.url, path), {
    headers: { authorization: `Bearer ${s.client.token}` },
  });
  await recorder.inbox.type("snapshot");

  // Offline: refused with device_offline, and recorded so.
  await assert.rejects(
    s.client.api.sendDeviceCommand({ params: ids, body: { type: "gpio_read", args: { pin: 15 } } }),
    (e: any) => e.code === "device_offline",
  );
  const offline = await recorder.inbox.next((m) => m.type === "command");
  assert.equal(offline.source, "api");
  assert.equal(offline.command, "gpio_read");
  assert.deepEqual(offline.args, { pin: 15 });
  assert.deepEqual(
    { ok: offline.result.ok, code: offline.result.code, ms: offline.ms },
    { ok: false, code: "device_offline", ms: 0 },
  );

  // Online, bad arguments: refused with invalid_argument, and recorded so.
  sim.start();
  await recorder.inbox.next((m) => m.type === "status" && m.status === "online");
  await assert.rejects(
    s.client.api.sendDeviceCommand({
      params: ids,
      body: { type: "gpio_write", args: { pin: 99, value: 1 } },
    }),
    (e: any) => e.code === "invalid_argument",
  );
  const invalid = await recorder.inbox.next((m) => m.type === "command" && m.seq > offline.seq);
  assert.equal(invalid.command, "gpio_write");
  assert.deepEqual(invalid.args, { pin: 99, value: 1 });
  assert.deepEqual(
    { ok: invalid.result.ok, code: invalid.result.code, ms: invalid.ms },
    { ok: false, code: "invalid_argument", ms: 0 },
  );
  for (const m of recorder.inbox.messages)
    assert.ok(WatchEvent.safeParse(m).success, `every event matches the schema: ${JSON.stringify(m)}`);

  // Another project's user learns nothing: their command is a 404, and no event.
  const other = await s.user();
  await assert.rejects(
    other.client.api.sendDeviceCommand({ params: ids, body: { type: "gpio_read", args: { pin: 15 } } }),
    (e: any) => e.status === 404,
  );
  await s.client.api.sendDeviceCommand({ params: ids, body: { type: "gpio_read", args: { pin: 14 } } });
  const next = await recorder.inbox.next((m) => m.type === "command" && m.seq > invalid.seq);
  assert.deepEqual(next.args, { pin: 14 }, "the other user's command was no event");

  // A message's `at` is the one its event carries (not when the watch frame was built).
  const at = Date.parse("2026-07-14T09:12:31.520Z");
  assert.deepEqual(
    toRecordEvent({ type: "device.message", payload: { ...ids, at, message: { type: "gpio_change" } } }),
    { type: "message", at: "2026-07-14T09:12:31.520Z", message: { type: "gpio_change" } },
  );
  const heard: number[] = [];
  t.after(s.server.bus.subscribe("device.message", (e) => void heard.push(e.at ?? Number.NaN)));
  sim.sendEvent("ping");
  const message = await recorder.inbox.next((m) => m.type === "message");
  await waitUntil(() => heard.length > 0, 5_000, "the device.message event");
  assert.equal(message.at, new Date(heard[0]!).toISOString());
});
