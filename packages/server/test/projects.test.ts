import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { SdkApiError } from "@sdk/client";
import { raw, startTestServer } from "./helpers/server.ts";

const code = (c: string) => (e: unknown) => e instanceof SdkApiError && e.code === c;

test("projects: create, list, get, rename, delete", async (t) => {
  const { user } = await startTestServer(t);
  const { client, auth } = await user();
  assert.deepEqual(await client.api.listProjects(), []);
  const p = await client.api.createProject({ body: { name: "  Greenhouse  " } });
  assert.match(p.id, /^prj_[a-z2-7]{20}$/);
  assert.equal(p.name, "Greenhouse");
  assert.equal(p.ownerId, auth.user.id);
  const q = await client.api.createProject({ body: { name: "Garage" } });
  assert.deepEqual(
    (await client.api.listProjects()).map((x) => x.name),
    ["Greenhouse", "Garage"],
  );
  assert.deepEqual(await client.api.getProject({ params: { projectId: p.id } }), p);
  const renamed = await client.api.renameProject({
    params: { projectId: p.id },
    body: { name: "Glasshouse" },
  });
  assert.equal(renamed.name, "Glasshouse");
  assert.ok(renamed.updatedAt >= p.updatedAt);
  await client.api.deleteProject({ params: { projectId: q.id } });
  assert.deepEqual(
    (await client.api.listProjects()).map((x) => x.id),
    [p.id],
  );
  await assert.rejects(client.api.getProject({ params: { projectId: q.id } }), code("not_found"));
  await assert.rejects(client.api.deleteProject({ params: { projectId: q.id } }), code("not_found"));
  await assert.rejects(client.api.getProject({ params: { projectId: "not even an id" } }), code("not_found"));
});

test("project names are validated", async (t) => {
  const { user } = await startTestServer(t);
  const { client } = await user();
  for (const name of ["", "   ", "x".repeat(101), "tab\there"]) {
    await assert.rejects(
      client.api.createProject({ body: { name } }),
      code("invalid_request"),
      JSON.stringify(name),
    );
  }
  await assert.rejects(
    client.api.createProject({ body: { name: 42 as unknown as string } }),
    (e: unknown) => {
      assert.ok(e instanceof SdkApiError);
      assert.deepEqual(e.fields, [{ path: "name", message: "must be a string" }]);
      return true;
    },
  );
});

test("deleting a project removes its devices, env vars and files under DATA_DIR", async (t) => {
  const { user, dataDir, server } = await startTestServer(t);
  const { client } = await user();
  const p = await client.api.createProject({ body: { name: "p" } });
  const keep = await client.api.createProject({ body: { name: "keep" } });
  await client.api.createDevice({ params: { projectId: p.id }, body: { name: "d", board: "pico_w" } });
  await client.api.createDevice({ params: { projectId: keep.id }, body: { name: "d", board: "pico_w" } });
  await client.api.setEnvVar({ params: { projectId: p.id, name: "A" }, body: { value: "1" } });
  const dir = path.join(dataDir, "projects", p.id);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, "bundle.js"), "export default 1");

  await client.api.deleteProject({ params: { projectId: p.id } });
  assert.equal(fs.existsSync(dir), false);
  const db = server.database.db;
  assert.equal(
    (await db.selectFrom("devices").selectAll().where("projectId", "=", p.id).execute()).length,
    0,
  );
  assert.equal(
    (await db.selectFrom("envVars").selectAll().where("projectId", "=", p.id).execute()).length,
    0,
  );
  assert.equal(
    (await client.api.listDevices({ params: { projectId: keep.id } })).length,
    1,
    "other projects keep theirs",
  );
});

test("devices: create (credentials once), list, get, rename, rotate credentials, delete", async (t) => {
  const { user, server } = await startTestServer(t);
  const { client } = await user();
  const p = await client.api.createProject({ body: { name: "p" } });
  const params = { projectId: p.id };
  const created = await client.api.createDevice({ params, body: { name: "Kitchen", board: "pico2_w" } });
  const d = created.device;
  assert.match(d.id, /^dev_[a-z2-7]{20}$/);
  assert.equal(d.projectId, p.id);
  assert.equal(d.board, "pico2_w");
  assert.equal(d.status, "offline");
  assert.equal(d.lastSeenAt, null);
  assert.equal(created.credentials.deviceId, d.id);
  assert.match(created.credentials.secret, /^dsk_/);

  const stored = await server.database.db
    .selectFrom("devices")
    .select("secretHash")
    .where("id", "=", d.id)
    .executeTakeFirstOrThrow();
  assert.ok(!stored.secretHash.includes(created.credentials.secret), "only a hash of the secret is stored");
  assert.equal(stored.secretHash.length, 64);

  const listed = await client.api.listDevices({ params });
  assert.deepEqual(listed, [d]);
  assert.equal((listed[0] as Record<string, unknown>).secretHash, undefined);
  assert.deepEqual(await client.api.getDevice({ params: { ...params, deviceId: d.id } }), d);
  assert.equal(
    (await client.api.renameDevice({ params: { ...params, deviceId: d.id }, body: { name: "Pantry" } })).name,
    "Pantry",
  );

  const rotated = await client.api.rotateDeviceCredentials({ params: { ...params, deviceId: d.id } });
  assert.equal(rotated.deviceId, d.id);
  assert.notEqual(rotated.secret, created.credentials.secret);
  const after = await server.database.db
    .selectFrom("devices")
    .select("secretHash")
    .where("id", "=", d.id)
    .executeTakeFirstOrThrow();
  assert.notEqual(after.secretHash, stored.secretHash, "the old secret stops working");

  await client.api.deleteDevice({ params: { ...params, deviceId: d.id } });
  await assert.rejects(client.api.getDevice({ params: { ...params, deviceId: d.id } }), code("not_found"));
  await assert.rejects(
    client.api.rotateDeviceCredentials({ params: { ...params, deviceId: d.id } }),
    code("not_found"),
  );
});

test("devices: boards and names are validated; a device is only found under its own project", async (t) => {
  const { user } = await startTestServer(t);
  const { client } = await user();
  const p = await client.api.createProject({ body: { name: "p" } });
  const q = await client.api.createProject({ body: { name: "q" } });
  await assert.rejects(
    client.api.createDevice({
      params: { projectId: p.id },
      body: { name: "d", board: "rp2040" as "pico_w" },
    }),
    code("invalid_request"),
  );
  await assert.rejects(
    client.api.createDevice({ params: { projectId: p.id }, body: { name: "", board: "pico_w" } }),
    code("invalid_request"),
  );
  const { device } = await client.api.createDevice({
    params: { projectId: p.id },
    body: { name: "d", board: "pico_w" },
  });
  await assert.rejects(
    client.api.getDevice({ params: { projectId: q.id, deviceId: device.id } }),
    code("not_found"),
  );
  await assert.rejects(
    client.api.deleteDevice({ params: { projectId: q.id, deviceId: device.id } }),
    code("not_found"),
  );
  assert.equal((await client.api.listDevices({ params: { projectId: p.id } })).length, 1);
});

test("env vars: set, list with values, update, unset; names and sizes are validated", async (t) => {
  const { user, server, url } = await startTestServer(t);
  const { client } = await user();
  const p = await client.api.createProject({ body: { name: "p" } });
  const at = (name: string) => ({ projectId: p.id, name });
  await client.api.setEnvVar({ params: at("WIFI_SSID"), body: { value: "home" } });
  await client.api.setEnvVar({ params: at("API_KEY"), body: { value: "s3cr3t-ünïcode" } });
  await client.api.setEnvVar({ params: at("WIFI_SSID"), body: { value: "home-2.4" } });
  assert.deepEqual(
    (await client.api.listEnvVars({ params: { projectId: p.id } })).map((e) => [e.name, e.value]),
    [
      ["API_KEY", "s3cr3t-ünïcode"],
      ["WIFI_SSID", "home-2.4"],
    ],
  );
  const rows = await server.database.db.selectFrom("envVars").select("valueEncrypted").execute();
  for (const row of rows) {
    assert.match(row.valueEncrypted, /^v1:/);
    assert.ok(
      !row.valueEncrypted.includes("home") && !row.valueEncrypted.includes("s3cr3t"),
      "values are encrypted at rest",
    );
  }
  await client.api.unsetEnvVar({ params: at("WIFI_SSID") });
  assert.deepEqual(
    (await client.api.listEnvVars({ params: { projectId: p.id } })).map((e) => e.name),
    ["API_KEY"],
  );
  await assert.rejects(client.api.unsetEnvVar({ params: at("WIFI_SSID") }), code("not_found"));

  for (const bad of ["lower", "1ABC", "A-B", "X".repeat(65)]) {
    await assert.rejects(
      client.api.setEnvVar({ params: at(bad), body: { value: "v" } }),
      code("invalid_request"),
      bad,
    );
  }
  await client.api.setEnvVar({ params: at("BIG"), body: { value: "x".repeat(4096) } });
  await assert.rejects(
    client.api.setEnvVar({ params: at("BIG"), body: { value: "x".repeat(4097) } }),
    code("invalid_request"),
  );
  await assert.rejects(
    client.api.setEnvVar({ params: at("BIG"), body: { value: "é".repeat(2049) } }),
    code("invalid_request"),
  );
  const noValue = await raw(`${url}/v1/projects/${p.id}/env/A`, {
    method: "PUT",
    headers: { authorization: `Bearer ${client.token}` },
    json: {},
  });
  assert.equal(noValue.status, 400);
  assert.deepEqual(noValue.body.error.fields, [{ path: "value", message: "is required" }]);
});

test("env vars: at most 100 per project", async (t) => {
  const { user } = await startTestServer(t);
  const { client } = await user();
  const p = await client.api.createProject({ body: { name: "p" } });
  for (let i = 0; i < 100; i++)
    await client.api.setEnvVar({ params: { projectId: p.id, name: `V${i}` }, body: { value: "x" } });
  await assert.rejects(
    client.api.setEnvVar({ params: { projectId: p.id, name: "ONE_MORE" }, body: { value: "x" } }),
    code("invalid_request"),
  );
  await client.api.setEnvVar({
    params: { projectId: p.id, name: "V0" },
    body: { value: "updating is fine" },
  });
});

test("a ciphertext moved to another project or name does not decrypt", async (t) => {
  const { user, server } = await startTestServer(t);
  const { client } = await user();
  const p = await client.api.createProject({ body: { name: "p" } });
  await client.api.setEnvVar({ params: { projectId: p.id, name: "A" }, body: { value: "one" } });
  await client.api.setEnvVar({ params: { projectId: p.id, name: "B" }, body: { value: "two" } });
  const db = server.database.db;
  const a = await db
    .selectFrom("envVars")
    .select("valueEncrypted")
    .where("name", "=", "A")
    .executeTakeFirstOrThrow();
  await db.updateTable("envVars").set({ valueEncrypted: a.valueEncrypted }).where("name", "=", "B").execute();
  await assert.rejects(client.api.listEnvVars({ params: { projectId: p.id } }), code("internal_error"));
});
