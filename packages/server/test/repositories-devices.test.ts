import assert from "node:assert/strict";
import { test } from "node:test";
import { HOUR, repositorySuites, T0 } from "./helpers/repository-suite.ts";

repositorySuites("repositories: devices, env vars, logs, state", ({ setup, tenants }) => {
  // ── devices ────────────────────────────────────────────────────────────────────────────────────

  test("devices: list and find follow project visibility and never expose the secret hash", async (t) => {
    const c = await setup(t);
    if (!c) return;
    const { aliceProject, bobProject, asAlice, asBob, asRoot } = await tenants(c);
    const d2 = await c.device(aliceProject.id, { id: "dev_2", createdAt: T0 + 1, board: "pico2_w" });
    const d1 = await c.device(aliceProject.id, {
      id: "dev_1",
      createdAt: T0 + 1,
      firmwareVersion: "1.2.3",
    });
    const d0 = await c.device(aliceProject.id, { id: "dev_9", createdAt: T0, lastSeenAt: T0 + 7 });
    await c.device(bobProject.id, { id: "dev_b" });

    const listed = await c.repos.devices.list(asAlice, aliceProject.id);
    assert.deepEqual(listed, [d0, d1, d2], "ordered by createdAt, then id");
    for (const row of listed) {
      assert.equal(row.status, "offline", "status defaults to offline");
      assert.equal("secretHash" in row, false);
    }
    assert.deepEqual(await c.repos.devices.list(asRoot, aliceProject.id), [d0, d1, d2]);
    assert.deepEqual(await c.repos.devices.list(asBob, aliceProject.id), []);

    assert.deepEqual(await c.repos.devices.find(asAlice, aliceProject.id, "dev_1"), d1);
    assert.deepEqual(await c.repos.devices.find(asRoot, aliceProject.id, "dev_1"), d1);
    assert.equal(await c.repos.devices.find(asBob, aliceProject.id, "dev_1"), undefined);
    assert.equal(await c.repos.devices.find(asAlice, aliceProject.id, "dev_missing"), undefined);
  });

  test("devices: a device is not found, renamed, re-keyed or deleted via another project's id", async (t) => {
    const c = await setup(t);
    if (!c) return;
    const { bob, aliceProject, bobProject, asAlice, asBob, asRoot } = await tenants(c);
    const bobOther = await c.project(bob.id);
    const device = await c.device(bobProject.id, { id: "dev_b", secretHash: "original" });

    // Alice's own (visible) project id does not reach Bob's device; nor does Bob's other project,
    // nor does an admin get through with the wrong project id.
    for (const [viewer, projectId] of [
      [asAlice, aliceProject.id],
      [asBob, bobOther.id],
      [asRoot, aliceProject.id],
    ] as const) {
      assert.equal(await c.repos.devices.find(viewer, projectId, device.id), undefined);
      assert.deepEqual(await c.repos.devices.list(viewer, projectId), []);
      assert.equal(await c.repos.devices.rename(viewer, projectId, device.id, "x", T0 + HOUR), undefined);
      assert.equal(
        await c.repos.devices.setSecretHash(viewer, projectId, device.id, "stolen", T0 + HOUR),
        false,
      );
      assert.equal(await c.repos.devices.delete(viewer, projectId, device.id), false);
    }
    assert.deepEqual(await c.repos.devices.find(asBob, bobProject.id, device.id), device);
    assert.equal(await c.secretHashOf(device.id), "original");
  });

  test("devices: rename returns the renamed row for a visible project, undefined otherwise", async (t) => {
    const c = await setup(t);
    if (!c) return;
    const { aliceProject, asAlice, asBob, asRoot } = await tenants(c);
    const device = await c.device(aliceProject.id);

    assert.equal(
      await c.repos.devices.rename(asBob, aliceProject.id, device.id, "bob's now", T0 + HOUR),
      undefined,
    );
    assert.deepEqual(await c.repos.devices.find(asAlice, aliceProject.id, device.id), device);

    const renamed = await c.repos.devices.rename(asAlice, aliceProject.id, device.id, "kitchen", T0 + HOUR);
    assert.deepEqual(renamed, { ...device, name: "kitchen", updatedAt: T0 + HOUR });
    assert.equal("secretHash" in (renamed ?? {}), false);
    assert.deepEqual(await c.repos.devices.find(asAlice, aliceProject.id, device.id), renamed);

    const byAdmin = await c.repos.devices.rename(asRoot, aliceProject.id, device.id, "hall", T0 + 2 * HOUR);
    assert.equal(byAdmin?.name, "hall");
    assert.equal(await c.repos.devices.rename(asAlice, aliceProject.id, "dev_missing", "x", T0), undefined);
  });

  test("devices: setSecretHash re-keys a device of a visible project only", async (t) => {
    const c = await setup(t);
    if (!c) return;
    const { aliceProject, asAlice, asBob, asRoot } = await tenants(c);
    const device = await c.device(aliceProject.id, { secretHash: "first" });
    const other = await c.device(aliceProject.id, { secretHash: "other" });

    assert.equal(
      await c.repos.devices.setSecretHash(asBob, aliceProject.id, device.id, "bob's", T0 + HOUR),
      false,
    );
    assert.equal(await c.secretHashOf(device.id), "first");
    assert.deepEqual(await c.repos.devices.find(asAlice, aliceProject.id, device.id), device);

    assert.equal(
      await c.repos.devices.setSecretHash(asAlice, aliceProject.id, device.id, "second", T0 + HOUR),
      true,
    );
    assert.equal(await c.secretHashOf(device.id), "second");
    assert.equal((await c.repos.devices.find(asAlice, aliceProject.id, device.id))?.updatedAt, T0 + HOUR);
    assert.equal(await c.secretHashOf(other.id), "other");

    assert.equal(await c.repos.devices.setSecretHash(asRoot, aliceProject.id, device.id, "third", T0), true);
    assert.equal(await c.secretHashOf(device.id), "third");
    assert.equal(
      await c.repos.devices.setSecretHash(asAlice, aliceProject.id, "dev_missing", "x", T0),
      false,
    );
  });

  test("devices: delete removes a device of a visible project only", async (t) => {
    const c = await setup(t);
    if (!c) return;
    const { aliceProject, asAlice, asBob, asRoot } = await tenants(c);
    const d1 = await c.device(aliceProject.id);
    const d2 = await c.device(aliceProject.id);

    assert.equal(await c.repos.devices.delete(asBob, aliceProject.id, d1.id), false);
    assert.deepEqual(await c.repos.devices.find(asAlice, aliceProject.id, d1.id), d1);

    assert.equal(await c.repos.devices.delete(asAlice, aliceProject.id, d1.id), true);
    assert.equal(await c.repos.devices.find(asAlice, aliceProject.id, d1.id), undefined);
    assert.equal(await c.repos.devices.delete(asAlice, aliceProject.id, d1.id), false);
    assert.deepEqual(await c.repos.devices.list(asAlice, aliceProject.id), [d2]);

    assert.equal(await c.repos.devices.delete(asRoot, aliceProject.id, d2.id), true);
    assert.deepEqual(await c.repos.devices.list(asAlice, aliceProject.id), []);
  });

  // ── env vars ───────────────────────────────────────────────────────────────────────────────────

  test("env vars: upsert inserts, then updates value and updatedAt in place", async (t) => {
    const c = await setup(t);
    if (!c) return;
    const { aliceProject, asAlice } = await tenants(c);
    const upsert = (valueEncrypted: string, updatedAt: number) =>
      c.repos.envVars.upsert({ projectId: aliceProject.id, name: "WIFI_SSID", valueEncrypted, updatedAt });

    await upsert("enc-1", T0);
    assert.deepEqual(await c.repos.envVars.list(asAlice, aliceProject.id), [
      { name: "WIFI_SSID", valueEncrypted: "enc-1", updatedAt: T0 },
    ]);
    await upsert("enc-2", T0 + HOUR);
    assert.deepEqual(await c.repos.envVars.list(asAlice, aliceProject.id), [
      { name: "WIFI_SSID", valueEncrypted: "enc-2", updatedAt: T0 + HOUR },
    ]);
    assert.equal(await c.repos.envVars.count(aliceProject.id), 1);
  });

  test("env vars: the same name in two projects is two variables", async (t) => {
    const c = await setup(t);
    if (!c) return;
    const { aliceProject, bobProject, asAlice, asBob } = await tenants(c);
    await c.repos.envVars.upsert({
      projectId: aliceProject.id,
      name: "KEY",
      valueEncrypted: "a",
      updatedAt: T0,
    });
    await c.repos.envVars.upsert({
      projectId: bobProject.id,
      name: "KEY",
      valueEncrypted: "b",
      updatedAt: T0,
    });
    assert.deepEqual(
      (await c.repos.envVars.list(asAlice, aliceProject.id)).map((v) => v.valueEncrypted),
      ["a"],
    );
    assert.deepEqual(
      (await c.repos.envVars.list(asBob, bobProject.id)).map((v) => v.valueEncrypted),
      ["b"],
    );
  });

  test("env vars: list is ordered by name and follows project visibility", async (t) => {
    const c = await setup(t);
    if (!c) return;
    const { aliceProject, asAlice, asBob, asRoot } = await tenants(c);
    // Names whose order is the same under byte-wise and linguistic collations.
    for (const name of ["WIFI_SSID", "API_KEY", "MQTT_HOST", "BROKER2", "BROKER1"]) {
      await c.repos.envVars.upsert({
        projectId: aliceProject.id,
        name,
        valueEncrypted: "v",
        updatedAt: T0,
      });
    }
    const expected = ["API_KEY", "BROKER1", "BROKER2", "MQTT_HOST", "WIFI_SSID"];
    assert.deepEqual(
      (await c.repos.envVars.list(asAlice, aliceProject.id)).map((v) => v.name),
      expected,
    );
    assert.deepEqual(
      (await c.repos.envVars.list(asRoot, aliceProject.id)).map((v) => v.name),
      expected,
    );
    assert.deepEqual(await c.repos.envVars.list(asBob, aliceProject.id), []);
  });

  test("env vars: count and exists are per project", async (t) => {
    const c = await setup(t);
    if (!c) return;
    const { aliceProject, bobProject } = await tenants(c);
    assert.equal(await c.repos.envVars.count(aliceProject.id), 0);
    assert.equal(await c.repos.envVars.exists(aliceProject.id, "A"), false);
    for (const name of ["A", "B", "C"]) {
      await c.repos.envVars.upsert({
        projectId: aliceProject.id,
        name,
        valueEncrypted: "v",
        updatedAt: T0,
      });
    }
    await c.repos.envVars.upsert({
      projectId: bobProject.id,
      name: "Z",
      valueEncrypted: "v",
      updatedAt: T0,
    });
    assert.equal(await c.repos.envVars.count(aliceProject.id), 3);
    assert.equal(await c.repos.envVars.count(bobProject.id), 1);
    assert.equal(await c.repos.envVars.exists(aliceProject.id, "B"), true);
    assert.equal(await c.repos.envVars.exists(aliceProject.id, "Z"), false);
    assert.equal(await c.repos.envVars.exists(bobProject.id, "Z"), true);
    assert.equal(await c.repos.envVars.exists(aliceProject.id, "b"), false, "names are case-sensitive");
  });

  test("env vars: delete removes a variable of a visible project only", async (t) => {
    const c = await setup(t);
    if (!c) return;
    const { aliceProject, asAlice, asBob, asRoot } = await tenants(c);
    for (const name of ["A", "B"]) {
      await c.repos.envVars.upsert({
        projectId: aliceProject.id,
        name,
        valueEncrypted: "v",
        updatedAt: T0,
      });
    }
    assert.equal(await c.repos.envVars.delete(asBob, aliceProject.id, "A"), false);
    assert.equal(await c.repos.envVars.exists(aliceProject.id, "A"), true);

    assert.equal(await c.repos.envVars.delete(asAlice, aliceProject.id, "A"), true);
    assert.equal(await c.repos.envVars.exists(aliceProject.id, "A"), false);
    assert.equal(await c.repos.envVars.delete(asAlice, aliceProject.id, "A"), false);
    assert.equal(await c.repos.envVars.delete(asAlice, aliceProject.id, "MISSING"), false);

    assert.equal(await c.repos.envVars.delete(asRoot, aliceProject.id, "B"), true);
    assert.equal(await c.repos.envVars.count(aliceProject.id), 0);
  });

  // ── device link: presence, logs, state ─────────────────────────────────────────────────────────

  test("devices: auth lookup, presence, mark all offline, ids in projects", async (t) => {
    const c = await setup(t);
    if (!c) return;
    const { aliceProject, bobProject, asAlice } = await tenants(c);
    const a = await c.device(aliceProject.id, { secretHash: "hash-a" });
    const b = await c.device(bobProject.id);
    assert.deepEqual(await c.repos.devices.findForAuth(a.id), {
      id: a.id,
      projectId: aliceProject.id,
      board: "pico_w",
      secretHash: "hash-a",
    });
    assert.equal(await c.repos.devices.findForAuth("dev_missing"), undefined);
    await c.repos.devices.setPresence(a.id, {
      status: "online",
      lastSeenAt: T0 + HOUR,
      firmwareVersion: "1.2.3",
      instanceId: "local",
    });
    await c.repos.devices.setPresence(b.id, { status: "online", lastSeenAt: T0 + HOUR, instanceId: "local" });
    const seen = await c.repos.devices.find(asAlice, aliceProject.id, a.id);
    assert.equal(seen?.status, "online");
    assert.equal(seen?.lastSeenAt, T0 + HOUR);
    assert.equal(seen?.firmwareVersion, "1.2.3");
    await c.repos.devices.markAllOffline();
    assert.equal((await c.repos.devices.find(asAlice, aliceProject.id, a.id))?.status, "offline");
    assert.equal(
      (await c.repos.devices.find(asAlice, aliceProject.id, a.id))?.lastSeenAt,
      T0 + HOUR,
      "last seen is kept",
    );
    assert.deepEqual(
      (await c.repos.devices.idsInProjects([aliceProject.id, bobProject.id])).sort(),
      [a.id, b.id].sort(),
    );
    assert.deepEqual(await c.repos.devices.idsInProjects([]), []);
  });

  test("devices: connection generations: each connection takes the next; an online write applies only for the newest", async (t) => {
    const c = await setup(t);
    if (!c) return;
    const { aliceProject, asAlice } = await tenants(c);
    const devices = c.repos.devices;
    const [a, b] = [await c.device(aliceProject.id), await c.device(aliceProject.id)];
    const instanceOf = async (id: string) =>
      (await c.database.db.selectFrom("devices").select("instanceId").where("id", "=", id).executeTakeFirst())
        ?.instanceId;
    // Connections authenticating in one commit are numbered in the order they came, per device.
    assert.deepEqual(
      await Promise.all([
        devices.nextGeneration(a.id),
        devices.nextGeneration(b.id),
        devices.nextGeneration(a.id),
        devices.nextGeneration("dev_unknown"),
      ]),
      [1, 1, 2, undefined],
    );
    // The older connection's hello (generation 1) comes late: it does not take the device.
    const online = (id: string, instanceId: string, generation: number, at = T0) =>
      devices.setPresence(id, { status: "online", lastSeenAt: at, instanceId, generation });
    assert.equal(await online(a.id, "i-b", 2), true);
    assert.equal(await online(a.id, "i-a", 1, T0 + 1), false, "a newer connection exists");
    assert.equal(await instanceOf(a.id), "i-b");
    assert.equal((await devices.find(asAlice, aliceProject.id, a.id))?.lastSeenAt, T0);
    // Two hellos of one device in one commit, the newer queued first: the newer's applies.
    const g3 = (await devices.nextGeneration(b.id))!;
    const both = await Promise.all([online(b.id, "i-b", g3), online(b.id, "i-a", 1), online(a.id, "i-c", 2)]);
    assert.deepEqual(both, [true, false, true]);
    assert.deepEqual([await instanceOf(b.id), await instanceOf(a.id)], ["i-b", "i-c"]);
    // One instance's offline (its connection closed) and a hello declined, in one commit: the offline applies.
    const g4 = (await devices.nextGeneration(b.id))!;
    await devices.nextGeneration(b.id); // a newer connection elsewhere, not online yet
    assert.deepEqual(
      await Promise.all([
        devices.setPresence(b.id, { status: "offline", lastSeenAt: T0 + 3, instanceId: "i-b" }),
        online(b.id, "i-b", g4, T0 + 4),
      ]),
      [true, false],
    );
    assert.deepEqual(
      [await instanceOf(b.id), (await devices.find(asAlice, aliceProject.id, b.id))?.status],
      [null, "offline"],
    );
    // A connection authenticated after the holder: the holder's offline write still applies.
    await devices.nextGeneration(a.id);
    assert.equal(
      await devices.setPresence(a.id, { status: "offline", lastSeenAt: T0 + 5, instanceId: "i-c" }),
      true,
    );
    assert.equal(await instanceOf(a.id), null);
  });

  test("devices: presence carries the serving instance; an offline write spares a device taken over", async (t) => {
    const c = await setup(t);
    if (!c) return;
    const { aliceProject, asAlice } = await tenants(c);
    const devices = c.repos.devices;
    const [a, b, d, e] = [
      await c.device(aliceProject.id),
      await c.device(aliceProject.id),
      await c.device(aliceProject.id),
      await c.device(aliceProject.id),
    ];
    const instanceOf = async (id: string) =>
      (await c.database.db.selectFrom("devices").select("instanceId").where("id", "=", id).executeTakeFirst())
        ?.instanceId;
    const statusOf = async (id: string) => (await devices.find(asAlice, aliceProject.id, id))?.status;
    await devices.setPresence(a.id, { status: "online", lastSeenAt: T0, instanceId: "i-a" });
    assert.equal(await instanceOf(a.id), "i-a");
    // Taken over by i-b; i-a's offline write (its socket closed late) does not apply.
    await devices.setPresence(a.id, { status: "online", lastSeenAt: T0 + 1, instanceId: "i-b" });
    assert.equal(
      await devices.setPresence(a.id, { status: "offline", lastSeenAt: T0 + 2, instanceId: "i-a" }),
      false,
      "not applied",
    );
    // In one commit with other devices' changes, it alone is spared.
    const together = await Promise.all([
      devices.setPresence(a.id, { status: "offline", lastSeenAt: T0 + 2, instanceId: "i-a" }),
      devices.setPresence(d.id, { status: "offline", lastSeenAt: T0 + 2, instanceId: "i-a" }),
      devices.setPresence(e.id, { status: "online", lastSeenAt: T0 + 2, instanceId: "i-a" }),
    ]);
    assert.deepEqual(together, [false, true, true]);
    assert.deepEqual([await statusOf(a.id), await instanceOf(a.id)], ["online", "i-b"]);
    const seen = await devices.find(asAlice, aliceProject.id, a.id);
    assert.equal(seen?.lastSeenAt, T0 + 1, "nothing of the stale write");
    // The serving instance's offline write applies, and so does any on a row without an instance.
    assert.equal(
      await devices.setPresence(a.id, { status: "offline", lastSeenAt: T0 + 3, instanceId: "i-b" }),
      true,
    );
    assert.deepEqual([await statusOf(a.id), await instanceOf(a.id)], ["offline", null]);
    await devices.setPresence(a.id, { status: "offline", lastSeenAt: T0 + 4, instanceId: "i-c" });
    assert.equal((await devices.find(asAlice, aliceProject.id, a.id))?.lastSeenAt, T0 + 4);

    // Online on a dead instance, on a live one, and (from before 0009) on none.
    await devices.setPresence(b.id, { status: "online", lastSeenAt: T0 + HOUR, instanceId: "i-dead" });
    await devices.setPresence(d.id, { status: "online", lastSeenAt: T0, instanceId: "i-live" });
    await devices.setPresence(e.id, { status: "online", lastSeenAt: T0, instanceId: "i-live" });
    await c.database.db.updateTable("devices").set({ instanceId: null }).where("id", "=", e.id).execute();
    const lost = await devices.markOfflineExcept(["i-live", "i-other"]);
    assert.deepEqual(
      lost.map((l) => l.id).sort(),
      [b.id, e.id].sort(),
      "those of no live instance (or none recorded)",
    );
    assert.deepEqual(
      lost.find((l) => l.id === b.id),
      { id: b.id, projectId: aliceProject.id, lastSeenAt: T0 + HOUR },
    );
    assert.deepEqual(
      [await statusOf(b.id), await statusOf(d.id), await statusOf(e.id)],
      ["offline", "online", "offline"],
    );

    await devices.setPresence(d.id, { status: "offline", lastSeenAt: T0, instanceId: "i-live" });
    await devices.setPresence(a.id, { status: "online", lastSeenAt: T0, instanceId: "i-x" });
    assert.deepEqual(
      (await devices.markOfflineExcept([])).map((l) => l.id),
      [a.id],
      "no live instance: every online device",
    );
  });

  test("device logs: newest first with paging, visibility, pruning by count and by age", async (t) => {
    const c = await setup(t);
    if (!c) return;
    const { aliceProject, asAlice, asBob, asRoot } = await tenants(c);
    const d = await c.device(aliceProject.id);
    for (let i = 0; i < 10; i++) {
      await c.repos.deviceLogs.insert({
        id: `log_${String(i).padStart(3, "0")}`,
        deviceId: d.id,
        at: T0 + i * HOUR,
        level: "info",
        source: "device",
        message: `line ${i}`,
      });
    }
    const page = (await c.repos.deviceLogs.list(asAlice, aliceProject.id, d.id, 3))!;
    assert.deepEqual(
      page.map((r) => r.message),
      ["line 9", "line 8", "line 7"],
    );
    assert.equal(typeof page[0]!.at, "number");
    assert.deepEqual(
      (await c.repos.deviceLogs.list(asAlice, aliceProject.id, d.id, 3, page[2]!.id))!.map((r) => r.message),
      ["line 6", "line 5", "line 4"],
    );
    assert.deepEqual(
      (await c.repos.deviceLogs.list(asBob, aliceProject.id, d.id, 10))!,
      [],
      "invisible to another member",
    );
    assert.equal(
      (await c.repos.deviceLogs.list(asRoot, aliceProject.id, d.id, 10))!.length,
      10,
      "admins see it",
    );
    await c.repos.deviceLogs.pruneDevice(d.id, 6);
    assert.deepEqual(
      (await c.repos.deviceLogs.list(asAlice, aliceProject.id, d.id, 100))!.map((r) => r.message),
      ["line 9", "line 8", "line 7", "line 6", "line 5", "line 4"],
    );
  });

  test("device state: latest value per entity, history newest first, pruning, visibility", async (t) => {
    const c = await setup(t);
    if (!c) return;
    const { aliceProject, asAlice, asBob } = await tenants(c);
    const d = await c.device(aliceProject.id);
    for (let i = 0; i < 5; i++) {
      await c.repos.deviceState.record({
        historyId: `sth_${i}`,
        deviceId: d.id,
        entityId: "temp",
        value: String(20 + i),
        at: T0 + i,
      });
    }
    await c.repos.deviceState.record({
      historyId: "sth_x",
      deviceId: d.id,
      entityId: "door",
      value: '{"open":true}',
      at: T0 + 9,
    });
    assert.deepEqual(await c.repos.deviceState.latest(asAlice, aliceProject.id, d.id), [
      { entityId: "door", value: '{"open":true}', updatedAt: T0 + 9 },
      { entityId: "temp", value: "24", updatedAt: T0 + 4 },
    ]);
    assert.equal(await c.repos.deviceState.countEntities(d.id), 2);
    assert.deepEqual(await c.repos.deviceState.latest(asBob, aliceProject.id, d.id), []);
    const history = (await c.repos.deviceState.history(asAlice, aliceProject.id, d.id, "temp", 2))!;
    assert.deepEqual(
      history.map((h) => h.value),
      ["24", "23"],
    );
    assert.deepEqual(
      (await c.repos.deviceState.history(asAlice, aliceProject.id, d.id, "temp", 10, history[1]!.id))!.map(
        (h) => h.value,
      ),
      ["22", "21", "20"],
    );
    assert.deepEqual((await c.repos.deviceState.history(asBob, aliceProject.id, d.id, "temp", 10))!, []);
    await c.repos.deviceState.pruneHistory(d.id, "temp", 2);
    assert.deepEqual(
      (await c.repos.deviceState.history(asAlice, aliceProject.id, d.id, "temp", 10))!.map((h) => h.value),
      ["24", "23"],
    );
    assert.equal(
      (await c.repos.deviceState.history(asAlice, aliceProject.id, d.id, "door", 10))!.length,
      1,
      "other entities keep theirs",
    );
  });

  test("state and logs: a burst in one commit keeps the last value per entity, every value in history and every line, and trims once", async (t) => {
    const c = await setup(t);
    if (!c) return;
    const { aliceProject, asAlice } = await tenants(c);
    const d = await c.device(aliceProject.id);
    const pad = (i: number) => String(i).padStart(4, "0");
    // 700 values queued in one turn: more rows than one multi-row statement holds, the same entity
    // many times (one upsert each), the last of each entity asking for a trim.
    const writes: Promise<void>[] = [];
    for (let i = 0; i < 700; i++) {
      const entityId = i % 2 === 0 ? "even" : "odd";
      writes.push(
        c.repos.deviceState.record({
          historyId: `sth_${pad(i)}`,
          deviceId: d.id,
          entityId,
          value: String(i),
          at: T0 + i,
          ...(i >= 698 ? { pruneTo: 300 } : {}),
        }),
      );
      writes.push(
        c.repos.deviceLogs.insert(
          {
            id: `log_${pad(i)}`,
            deviceId: d.id,
            at: T0 + i,
            level: "info",
            source: "device",
            message: `line ${i}`,
          },
          i === 699 ? { pruneTo: 500 } : {},
        ),
      );
    }
    await Promise.all(writes);
    assert.deepEqual(await c.repos.deviceState.latest(asAlice, aliceProject.id, d.id), [
      { entityId: "even", value: "698", updatedAt: T0 + 698 },
      { entityId: "odd", value: "699", updatedAt: T0 + 699 },
    ]);
    const even = (await c.repos.deviceState.history(asAlice, aliceProject.id, d.id, "even", 1000))!;
    assert.equal(even.length, 300, "trimmed to the newest 300 in the same commit");
    assert.deepEqual([even[0]!.value, even.at(-1)!.value], ["698", "100"]);
    const logs = (await c.repos.deviceLogs.list(asAlice, aliceProject.id, d.id, 1000))!;
    assert.equal(logs.length, 500);
    assert.deepEqual([logs[0]!.message, logs.at(-1)!.message], ["line 699", "line 200"]);
  });

  test("firmware releases: insert, find and list; a second insert of the same version and board is a no-op", async (t) => {
    const c = await setup(t);
    if (!c) return;
    const row = {
      version: "1.0.0",
      board: "pico_w" as const,
      bytes: 4 * 1024 * 1024,
      sha256: "a".repeat(64),
      source: "bundle" as const,
      createdAt: T0,
    };
    await c.repos.firmware.insert(row);
    await c.repos.firmware.insert({ ...row, sha256: "b".repeat(64), source: "upload" });
    await c.repos.firmware.insert({ ...row, board: "pico2_w", version: "1.1.0" });
    assert.deepEqual(await c.repos.firmware.find("1.0.0", "pico_w"), row);
    assert.equal(await c.repos.firmware.find("1.0.0", "pico2_w"), undefined);
    assert.equal((await c.repos.firmware.list()).length, 2);
    assert.deepEqual((await c.repos.firmware.versions()).sort(), ["1.0.0", "1.1.0"]);
  });
});
