import assert from "node:assert/strict";
import { test } from "node:test";
import { repositorySuites, T0 } from "./helpers/repository-suite.ts";

repositorySuites("repositories: device tags", ({ setup, tenants }) => {
  test("device tags: update, the list filter and byDevice follow project visibility; rows go with the device", async (t) => {
    const c = await setup(t);
    if (!c) return;
    const { aliceProject, bobProject, asAlice, asBob, asRoot } = await tenants(c);
    const d1 = await c.device(aliceProject.id, { createdAt: T0 });
    const d2 = await c.device(aliceProject.id, { createdAt: T0 + 1 });
    const b1 = await c.device(bobProject.id);
    const tags = c.repos.deviceTags;

    assert.deepEqual(await tags.update(asAlice, aliceProject.id, d1.id, () => ["kitchen", "hall"], T0 + 5), {
      before: [],
      after: ["kitchen", "hall"],
    });
    await tags.update(asRoot, aliceProject.id, d2.id, () => ["kitchen"], T0 + 5);
    await tags.update(asBob, bobProject.id, b1.id, () => ["kitchen"], T0 + 5);
    assert.equal(await tags.update(asBob, aliceProject.id, d1.id, () => ["x"], T0), undefined, "not Bob's");
    assert.equal(await tags.update(asBob, bobProject.id, d1.id, () => ["x"], T0), undefined, "wrong project");
    assert.deepEqual(
      await tags.update(asAlice, aliceProject.id, d1.id, () => null, T0),
      { before: ["hall", "kitchen"], after: null },
      "a refused change writes nothing",
    );

    const ids = async (viewer: typeof asAlice, tag?: string) =>
      (await c.repos.devices.list(viewer, aliceProject.id, tag)).map((d) => d.id);
    assert.deepEqual(await ids(asAlice, "kitchen"), [d1.id, d2.id]);
    assert.deepEqual(await ids(asAlice, "hall"), [d1.id]);
    assert.deepEqual(await ids(asAlice, "garage"), []);
    assert.deepEqual(await ids(asBob, "kitchen"), []);
    assert.deepEqual(
      [...(await tags.byDevice(asAlice, aliceProject.id)).entries()],
      [
        [d1.id, ["hall", "kitchen"]],
        [d2.id, ["kitchen"]],
      ].sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
    );
    assert.equal((await tags.byDevice(asBob, aliceProject.id)).size, 0);
    assert.deepEqual(await tags.ofDevice(asBob, aliceProject.id, d1.id), []);
    assert.deepEqual(await tags.ofDevice(asAlice, aliceProject.id, d1.id), ["hall", "kitchen"]);
    assert.equal((await c.repos.devices.find(asAlice, aliceProject.id, d1.id))?.updatedAt, T0 + 5);

    await tags.update(asAlice, aliceProject.id, d1.id, (now) => now.filter((x) => x !== "kitchen"), T0 + 6);
    assert.deepEqual(await ids(asAlice, "kitchen"), [d2.id]);

    assert.ok(await c.repos.devices.delete(asAlice, aliceProject.id, d2.id));
    assert.deepEqual(await ids(asAlice, "kitchen"), [], "a deleted device's tags go with it");
  });

  test("device tags: insertMany adds every device with its tags, or none", async (t) => {
    const c = await setup(t);
    if (!c) return;
    const { aliceProject, asAlice } = await tenants(c);
    const row = (id: string, tags: string[]) => ({
      id,
      projectId: aliceProject.id,
      name: id,
      board: "pico_w" as const,
      secretHash: "h",
      lastSeenAt: null,
      firmwareVersion: null,
      createdAt: T0,
      updatedAt: T0,
      tags,
    });
    await c.repos.devices.insertMany([row("dev_a", ["x"]), row("dev_b", [])]);
    await assert.rejects(
      c.repos.devices.insertMany([row("dev_c", ["x"]), row("dev_a", ["y"])]),
      "duplicate id",
    );
    const listed = await c.repos.devices.list(asAlice, aliceProject.id);
    assert.deepEqual(
      listed.map((d) => d.id),
      ["dev_a", "dev_b"],
      "the failed batch added nothing",
    );
    assert.deepEqual(
      (await c.repos.devices.list(asAlice, aliceProject.id, "x")).map((d) => d.id),
      ["dev_a"],
    );
  });
});
