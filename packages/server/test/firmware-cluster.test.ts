// Firmware releases on the instances of a cluster: one database, a DATA_DIR each. A release
// uploaded through one instance downloads (and so flashes) through any other.
import assert from "node:assert/strict";
import fs from "node:fs";
import { test } from "node:test";
import { fakeReleaseUf2 } from "@sdk/test-helpers";
import { InProcessEventBus } from "../src/events/bus.ts";
import type { Principal } from "../src/services/auth.ts";
import { firmwareService } from "../src/services/firmware.ts";
import { FirmwareFiles } from "../src/storage/firmware-files.ts";
import { TestClock } from "./helpers/clock.ts";
import { type Ctx, repositorySuites } from "./helpers/repository-suite.ts";
import { tempDir } from "./helpers/server.ts";

const admin = { user: { id: "usr_1", role: "admin" }, via: "token", credentialId: "tok_1" } as Principal;

repositorySuites("firmware in a cluster", ({ setup }) => {
  const instance = (c: Ctx, dataDir: string, shared: boolean) => {
    const files = new FirmwareFiles(dataDir);
    const service = firmwareService({
      repos: c.repos,
      files,
      bus: new InProcessEventBus((e) => assert.fail(e as Error)),
      clock: new TestClock(),
      shared,
    });
    return { service, files };
  };

  test("a release uploaded through A downloads through B, which keeps a copy", async (t) => {
    const c = await setup(t);
    if (!c) return;
    const a = instance(c, tempDir(t), true);
    const b = instance(c, tempDir(t), true);
    const uf2 = fakeReleaseUf2({ board: "pico_w" });
    await a.service.upload(admin, "1.2.0", "pico_w", uf2);
    assert.deepEqual(
      (await b.service.list()).map((r) => r.version),
      ["1.2.0"],
    );
    const { bytes, filename } = await b.service.download("1.2.0", "pico_w");
    assert.deepEqual(bytes, uf2);
    assert.equal(filename, "sdk-1.2.0-pico_w.uf2");
    assert.deepEqual(new Uint8Array(fs.readFileSync(b.files.file("1.2.0", "pico_w"))), uf2, "B's own copy");
    // The same bytes again through B: unchanged, as on one server.
    await b.service.upload(admin, "1.2.0", "pico_w", uf2);
  });

  test("a release's row and its database image are written together: a failed image write leaves no release", async (t) => {
    const c = await setup(t);
    if (!c) return;
    const row = {
      version: "1.5.0",
      board: "pico_w" as const,
      bytes: 4,
      sha256: "0".repeat(64),
      source: "upload" as const,
      createdAt: 1,
    };
    await assert.rejects(c.repos.firmware.insert(row, null as unknown as string));
    assert.equal(await c.repos.firmware.find("1.5.0", "pico_w"), undefined, "no row without its image");
    await c.repos.firmware.insert(row, "AAAA");
    assert.equal((await c.repos.firmware.find("1.5.0", "pico_w"))?.sha256, row.sha256);
    assert.equal(await c.repos.firmware.image("1.5.0", "pico_w"), "AAAA");
  });

  test("a damaged database copy is never served: a 500 with what happened, and an upload of the same UF2 mends it", async (t) => {
    const c = await setup(t);
    if (!c) return;
    const a = instance(c, tempDir(t), true);
    const b = instance(c, tempDir(t), true);
    const uf2 = fakeReleaseUf2({ board: "pico_w" });
    await a.service.upload(admin, "1.3.0", "pico_w", uf2);
    const damaged = Buffer.from(uf2);
    damaged[100] = damaged[100]! ^ 0xff;
    await c.database.db
      .updateTable("firmwareImages")
      .set({ uf2: damaged.toString("base64") })
      .where("version", "=", "1.3.0")
      .execute();
    await assert.rejects(
      b.service.download("1.3.0", "pico_w"),
      (e: any) =>
        e.code === "internal_error" &&
        e.status === 500 &&
        /^The database's copy of firmware 1\.3\.0 for pico_w is damaged \(sha256 [0-9a-f]{12}…, the release's is [0-9a-f]{12}…\), so it is not served/.test(
          e.message,
        ),
    );
    assert.equal(fs.existsSync(b.files.file("1.3.0", "pico_w")), false, "B kept no copy");
    assert.equal(await c.repos.firmware.image("1.3.0", "pico_w"), undefined, "the damaged copy was removed");
    await assert.rejects(b.service.download("1.3.0", "pico_w"), /No firmware release 1\.3\.0 for pico_w/);
    // A holds the file: the same UF2 uploaded again puts it back.
    await a.service.upload(admin, "1.3.0", "pico_w", uf2);
    assert.deepEqual((await b.service.download("1.3.0", "pico_w")).bytes, uf2);
  });

  test("one process keeps its files only; becoming a cluster copies them into the database", async (t) => {
    const c = await setup(t);
    if (!c) return;
    const dataDir = tempDir(t);
    const before = instance(c, dataDir, false);
    const uf2 = fakeReleaseUf2({ board: "pico2_w" });
    await before.service.upload(admin, "1.0.0", "pico2_w", uf2);
    assert.equal(await c.repos.firmware.image("1.0.0", "pico2_w"), undefined, "nothing in the database");
    const other = instance(c, tempDir(t), true);
    await assert.rejects(other.service.download("1.0.0", "pico2_w"), /No firmware release 1.0.0 for pico2_w/);

    const after = instance(c, dataDir, true);
    assert.equal(await after.service.shareStored(), 1);
    assert.equal(await after.service.shareStored(), 0, "once");
    assert.deepEqual((await other.service.download("1.0.0", "pico2_w")).bytes, uf2);
  });
});
