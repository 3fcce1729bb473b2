// watchProject against a real server process: filters in the query, devices created later,
// reconnecting after a restart with a fresh snapshot, and staying closed once the project is gone.
import assert from "node:assert/strict";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { SdkClient, watchProject } from "@sdk/client";
import type { ProjectWatchEvent } from "@sdk/protocol";
import { startServer } from "./helpers/server.ts";

test("watchProject: filters, a device created later, a reconnect with a fresh snapshot, 4004 when the project goes", async (t) => {
  const server = await startServer();
  t.after(() => server.dispose());
  const auth = await new SdkClient({ baseUrl: server.url }).api.register({
    body: { email: "owner@example.com", password: "correct horse battery", issueToken: true },
  });
  const client = new SdkClient({ baseUrl: server.url, token: auth.token!.token });
  const project = await client.api.createProject({ body: { name: "p" } });

  const events: ProjectWatchEvent[] = [];
  const closes: { code: number; willReconnect: boolean }[] = [];
  let opens = 0;
  let changed = () => {};
  const until = (what: string, done: () => boolean, ms = 20_000) =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${what} did not happen within ${ms} ms`)), ms);
      changed = () => {
        if (!done()) return;
        clearTimeout(timer);
        resolve();
      };
      changed();
    });
  const handle = watchProject(server.url, client.token, project.id, {
    events: ["status"],
    onOpen: () => {
      opens++;
      changed();
    },
    onEvent: (event) => {
      events.push(event);
      changed();
    },
    onClose: (info) => {
      closes.push(info);
      changed();
    },
  });
  t.after(() => handle.stop());
  const snapshots = () => events.filter((e) => e.type === "snapshot");

  await until("the snapshot", () => snapshots().length === 1);
  assert.deepEqual((snapshots()[0] as Extract<ProjectWatchEvent, { type: "snapshot" }>).devices, []);
  const created = await client.api.createDevice({
    params: { projectId: project.id },
    body: { name: "later", board: "pico_w" },
  });
  await until("device_created", () => events.some((e) => e.type === "device_created"));

  await server.stop();
  await until("the drop", () => closes.length >= 1);
  assert.equal(closes[0]!.willReconnect, true);
  await server.start();
  await until("a second snapshot", () => snapshots().length === 2);
  const again = snapshots()[1] as Extract<ProjectWatchEvent, { type: "snapshot" }>;
  assert.deepEqual(
    again.devices.map((d) => d.device.id),
    [created.device.id],
  );

  const opened = opens;
  await client.api.deleteProject({ params: { projectId: project.id } });
  await until("the close", () => closes.some((c) => c.code === 4004));
  assert.equal(closes.at(-1)!.willReconnect, false);
  await sleep(1_500); // longer than the first retry would wait
  assert.equal(opens, opened, "no reconnect after 4004");
});

test("watchProject: a tags filter reaches the server; a device that gains the tag joins with device_tags", async (t) => {
  const server = await startServer();
  t.after(() => server.dispose());
  const auth = await new SdkClient({ baseUrl: server.url }).api.register({
    body: { email: "tagger@example.com", password: "correct horse battery", issueToken: true },
  });
  const client = new SdkClient({ baseUrl: server.url, token: auth.token!.token });
  const project = await client.api.createProject({ body: { name: "p" } });
  const make = (name: string) =>
    client.api.createDevice({ params: { projectId: project.id }, body: { name, board: "pico_w" } });
  const tagged = await make("tagged");
  const plain = await make("plain");
  await client.api.setDeviceTags({
    params: { projectId: project.id, deviceId: tagged.device.id },
    body: { tags: ["hall"] },
  });

  const events: ProjectWatchEvent[] = [];
  let changed = () => {};
  const until = (what: string, done: () => boolean, ms = 20_000) =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${what} did not happen within ${ms} ms`)), ms);
      changed = () => {
        if (!done()) return;
        clearTimeout(timer);
        resolve();
      };
      changed();
    });
  const handle = watchProject(server.url, client.token, project.id, {
    tags: ["hall"],
    onEvent: (event) => {
      events.push(event);
      changed();
    },
  });
  t.after(() => handle.stop());
  await until("the snapshot", () => events.some((e) => e.type === "snapshot"));
  const snapshot = events[0] as Extract<ProjectWatchEvent, { type: "snapshot" }>;
  assert.deepEqual(
    snapshot.devices.map((d) => d.device.id),
    [tagged.device.id],
  );
  await client.api.addDeviceTags({
    params: { projectId: project.id, deviceId: plain.device.id },
    body: { tags: ["hall"] },
  });
  await until("device_tags", () =>
    events.some((e) => e.type === "device_tags" && e.deviceId === plain.device.id),
  );
});
