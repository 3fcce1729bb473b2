import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { Writable } from "node:stream";
import { type TestContext, test } from "node:test";
import { SdkApiError } from "@sdk/client";
import { compareFirmwareVersions, firmwareLimits } from "@sdk/protocol";
import { SimulatedDevice } from "@sdk/simulator";
import { fakeConfigSector, fakeReleaseUf2, waitUntil } from "@sdk/test-helpers";
import pino from "pino";
import { raw, startTestServer, tempDir } from "./helpers/server.ts";

const code = (c: string, message?: RegExp) => (e: unknown) =>
  e instanceof SdkApiError && e.code === c && (!message || message.test(e.message));
const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

/** A logger whose lines the test reads. */
function capture() {
  const lines: { level: number; msg: string }[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(String(chunk)));
      done();
    },
  });
  const bundleLines = () => lines.map((l) => l.msg).filter((m) => m.startsWith("firmware bundle:"));
  return { logger: pino({ level: "info" }, sink), lines, bundleLines };
}

function writeBundle(t: TestContext, files: Record<string, Uint8Array>): string {
  const dir = tempDir(t);
  for (const [name, bytes] of Object.entries(files)) {
    fs.mkdirSync(path.join(dir, path.dirname(name)), { recursive: true });
    fs.writeFileSync(path.join(dir, name), bytes);
  }
  return dir;
}

const good = { pico_w: fakeReleaseUf2({ board: "pico_w" }), pico2_w: fakeReleaseUf2({ board: "pico2_w" }) };

test("import at boot: good files are stored once; a wrong family, the config sector, a truncated file and a bad directory are refused with one log line each", async (t) => {
  const truncated = fakeReleaseUf2({ board: "pico2_w" }).slice(0, 512 * 3 + 100);
  const firmwareDir = writeBundle(t, {
    "1.0.0/pico_w.uf2": good.pico_w,
    "1.0.0/pico2_w.uf2": good.pico2_w,
    "1.1.0/pico_w.uf2": fakeReleaseUf2({ board: "pico_w", familyId: 0xe48bff59 }),
    "1.2.0/pico_w.uf2": fakeReleaseUf2({ board: "pico_w", extraBlockAt: fakeConfigSector("pico_w") }),
    "1.3.0/pico2_w.uf2": truncated,
    "latest/pico_w.uf2": good.pico_w,
    "1.0.0/notes.txt": new TextEncoder().encode("hello"),
  });
  const dataDir = tempDir(t);
  const first = capture();
  const s = await startTestServer(t, { dataDir, env: { FIRMWARE_DIR: firmwareDir }, logger: first.logger });
  assert.deepEqual(first.bundleLines(), [
    "firmware bundle: refused 1.0.0/notes.txt: not a board's file (pico_w.uf2 or pico2_w.uf2)",
    `firmware bundle: imported 1.0.0/pico2_w.uf2 (${good.pico2_w.length} bytes, sha256 ${sha256(good.pico2_w)})`,
    `firmware bundle: imported 1.0.0/pico_w.uf2 (${good.pico_w.length} bytes, sha256 ${sha256(good.pico_w)})`,
    "firmware bundle: refused 1.1.0/pico_w.uf2: block 0: family 0xe48bff59 is not pico_w's (0xe48bff56)",
    "firmware bundle: refused 1.2.0/pico_w.uf2: block 16: target address 0x101fe000 is not below the config sector at 0x101fe000 (an image must end before it)",
    `firmware bundle: refused 1.3.0/pico2_w.uf2: the UF2 file is ${512 * 3 + 100} bytes, not a multiple of 512 (truncated?): block 3 is cut short`,
    "firmware bundle: refused latest/: the directory name is not a semantic version like 1.0.0",
  ]);
  const refusals = first.lines.filter((l) => l.msg.includes(": refused "));
  assert.ok(
    refusals.every((l) => l.level === 40),
    "refusals are warnings",
  );

  const { client } = await s.user();
  assert.deepEqual(await client.api.listFirmware(), [
    {
      version: "1.0.0",
      newest: true,
      boards: [
        { board: "pico_w", bytes: good.pico_w.length, sha256: sha256(good.pico_w) },
        { board: "pico2_w", bytes: good.pico2_w.length, sha256: sha256(good.pico2_w) },
      ],
    },
  ]);
  assert.deepEqual(
    fs.readFileSync(path.join(dataDir, "firmware", "1.0.0", "pico_w.uf2")),
    Buffer.from(good.pico_w),
  );
  await s.server.close();

  // The same bundle again: nothing to do. A changed file for a stored release is refused.
  fs.writeFileSync(
    path.join(firmwareDir, "1.0.0", "pico2_w.uf2"),
    fakeReleaseUf2({ board: "pico2_w", fill: 1 }),
  );
  const second = capture();
  const again = await startTestServer(t, {
    dataDir,
    env: { FIRMWARE_DIR: firmwareDir },
    logger: second.logger,
  });
  const lines = second.bundleLines();
  assert.ok(!lines.some((l) => l.includes("imported")), lines.join("\n"));
  assert.ok(
    lines.includes(
      "firmware bundle: refused 1.0.0/pico2_w.uf2: a different UF2 is already stored as 1.0.0 for pico2_w (from an earlier bundle); releases never change, so the stored one stays",
    ),
    lines.join("\n"),
  );
  const { client: c2 } = await again.user();
  const bytes = await c2.downloadFirmware({ version: "1.0.0", board: "pico2_w" });
  assert.equal(sha256(bytes), sha256(good.pico2_w), "the stored file is kept");
});

test("import at boot: a FIRMWARE_DIR that cannot be read is one log line and the server starts", async (t) => {
  const log = capture();
  const s = await startTestServer(t, { env: { FIRMWARE_DIR: "/nonexistent/firmware" }, logger: log.logger });
  assert.equal(log.bundleLines().length, 1);
  assert.match(
    log.bundleLines()[0]!,
    /^firmware bundle: FIRMWARE_DIR \/nonexistent\/firmware cannot be read \(ENOENT/,
  );
  const { client } = await s.user();
  assert.deepEqual(await client.api.listFirmware(), []);
});

test("download: the UF2 with its file name; 404 with the error envelope when absent; users only", async (t) => {
  const firmwareDir = writeBundle(t, { "1.0.0/pico_w.uf2": good.pico_w });
  const s = await startTestServer(t, { env: { FIRMWARE_DIR: firmwareDir } });
  const { client } = await s.user();
  const bytes = await client.downloadFirmware({ version: "1.0.0", board: "pico_w" });
  assert.ok(bytes instanceof Uint8Array);
  assert.deepEqual(Buffer.from(bytes), Buffer.from(good.pico_w));

  const response = await raw(`${s.url}/v1/firmware/1.0.0/pico_w`, {
    headers: { authorization: `Bearer ${client.token}` },
  });
  assert.equal(response.status, 200);
  assert.equal(response.headers.get("content-type"), "application/octet-stream");
  assert.equal(response.headers.get("content-disposition"), 'attachment; filename="sdk-1.0.0-pico_w.uf2"');

  await assert.rejects(
    client.downloadFirmware({ version: "1.0.0", board: "pico2_w" }),
    code("not_found", /No firmware release 1.0.0 for pico2_w/),
  );
  const missing = await raw(`${s.url}/v1/firmware/9.9.9/pico_w`, {
    headers: { authorization: `Bearer ${client.token}` },
  });
  assert.equal(missing.status, 404);
  assert.equal(missing.body.success, false);
  assert.equal(missing.body.error.code, "not_found");
  assert.match(missing.body.error.docs, /\/docs\/errors#not_found$/);
  await assert.rejects(
    client.downloadFirmware({ version: "latest", board: "pico_w" }),
    code("invalid_request", /semantic version/),
  );
  await assert.rejects(
    client.downloadFirmware({ version: "1.0.0", board: "esp32" as "pico_w" }),
    code("invalid_request", /board must be one of pico_w, pico2_w/),
  );
  await assert.rejects(
    s.anon.downloadFirmware({ version: "1.0.0", board: "pico_w" }),
    code("authentication_required"),
  );
  await assert.rejects(s.anon.api.listFirmware(), code("authentication_required"));
});

test("upload: admins add their own builds, checked like bundled ones; members are refused; 4 MiB at most", async (t) => {
  const s = await startTestServer(t);
  const { client: admin } = await s.user("admin@example.com");
  const { client: member } = await s.user("member@example.com");

  const release = await admin.uploadFirmware({ version: "2.0.0", board: "pico2_w", bytes: good.pico2_w });
  assert.deepEqual(release, {
    version: "2.0.0",
    newest: true,
    boards: [{ board: "pico2_w", bytes: good.pico2_w.length, sha256: sha256(good.pico2_w) }],
  });
  assert.deepEqual(
    Buffer.from(await member.downloadFirmware({ version: "2.0.0", board: "pico2_w" })),
    Buffer.from(good.pico2_w),
  );
  const audit = await admin.api.listAudit();
  const entry = audit.find((a) => a.action === "firmware.uploaded");
  assert.ok(entry);
  assert.equal(entry.targetId, "2.0.0");
  assert.deepEqual(entry.detail, { board: "pico2_w", sha256: sha256(good.pico2_w) });

  await assert.rejects(
    member.uploadFirmware({ version: "2.0.1", board: "pico_w", bytes: good.pico_w }),
    code("forbidden"),
  );
  await assert.rejects(
    admin.uploadFirmware({ version: "2.0.1", board: "pico_w", bytes: good.pico2_w }),
    code(
      "invalid_firmware",
      /^Invalid firmware image for pico_w: block 1: family 0xe48bff59 is not pico_w's \(0xe48bff56\)/,
    ),
  );
  await assert.rejects(
    admin.uploadFirmware({
      version: "2.0.1",
      board: "pico2_w",
      bytes: fakeReleaseUf2({ board: "pico2_w", extraBlockAt: fakeConfigSector("pico2_w") + 4096 }),
    }),
    code("invalid_firmware", /target address 0x103ff000 is not below the config sector/),
  );
  await assert.rejects(
    admin.uploadFirmware({ version: "2.0.1", board: "pico_w", bytes: new Uint8Array(0) }),
    code("invalid_firmware", /the UF2 file is empty/),
  );
  // The same bytes again are fine; different bytes for a stored version and board are not.
  assert.equal(
    (await admin.uploadFirmware({ version: "2.0.0", board: "pico2_w", bytes: good.pico2_w })).version,
    "2.0.0",
  );
  await assert.rejects(
    admin.uploadFirmware({
      version: "2.0.0",
      board: "pico2_w",
      bytes: fakeReleaseUf2({ board: "pico2_w", fill: 7 }),
    }),
    code("firmware_exists", /already has a different UF2 for pico2_w/),
  );
  assert.equal(
    (await admin.api.listAudit()).filter((a) => a.action === "firmware.uploaded").length,
    1,
    "storing the same bytes again is not a new upload",
  );

  const tooBig = await raw(`${s.url}/v1/admin/firmware/2.0.1/pico2_w`, {
    method: "PUT",
    headers: { authorization: `Bearer ${admin.token}`, "content-type": "application/octet-stream" },
    body: new Uint8Array(firmwareLimits.uf2MaxBytes + 512),
  });
  assert.equal(tooBig.status, 413);
  assert.equal(tooBig.body.error.code, "payload_too_large");
  const json = await raw(`${s.url}/v1/admin/firmware/2.0.1/pico_w`, {
    method: "PUT",
    headers: { authorization: `Bearer ${admin.token}` },
    json: { bytes: "AAAA" },
  });
  assert.equal(json.status, 415);
  assert.equal(json.body.error.code, "unsupported_media_type");
  // Raw bytes go to the firmware upload only.
  const elsewhere = await raw(`${s.url}/v1/projects`, {
    method: "POST",
    headers: { authorization: `Bearer ${admin.token}`, "content-type": "application/octet-stream" },
    body: new Uint8Array(8),
  });
  assert.equal(elsewhere.status, 415);

  // Newest first in semver order, whatever the upload order.
  for (const version of ["1.10.0", "1.9.0", "2.1.0-rc.1", "2.1.0-rc.2"]) {
    await admin.uploadFirmware({ version, board: "pico_w", bytes: good.pico_w });
  }
  const list = await member.api.listFirmware();
  assert.deepEqual(
    list.map((r) => [r.version, r.newest]),
    [
      ["2.1.0-rc.2", true],
      ["2.1.0-rc.1", false],
      ["2.0.0", false],
      ["1.10.0", false],
      ["1.9.0", false],
    ],
  );
});

test("devices: firmwareUpdate names the newest release when it is newer than what the board runs", async (t) => {
  const firmwareDir = writeBundle(t, { "1.0.0/pico_w.uf2": good.pico_w });
  const s = await startTestServer(t, { env: { FIRMWARE_DIR: firmwareDir } });
  const { client: admin } = await s.user();
  const project = await admin.api.createProject({ body: { name: "p" } });
  const create = (name: string) =>
    admin.api.createDevice({ params: { projectId: project.id }, body: { name, board: "pico_w" } });
  const old = await create("old");
  const fresh = await create("fresh");
  assert.equal(old.device.firmwareUpdate, null, "never connected: unknown firmware");

  const connect = async (created: typeof old, firmware: string) => {
    const sim = new SimulatedDevice({
      server: new URL(s.url).host,
      deviceId: created.device.id,
      secret: created.credentials.secret,
      board: "pico_w",
      reconnect: false,
      firmware,
    });
    t.after(() => sim.stop());
    sim.start();
    await sim.waitFor("connected");
    const params = { projectId: project.id, deviceId: created.device.id };
    await waitUntil(async () => (await admin.api.getDevice({ params })).firmwareVersion === firmware);
    return params;
  };
  const oldIds = await connect(old, "0.9.0");
  const freshIds = await connect(fresh, "1.0.0");
  assert.equal((await admin.api.getDevice({ params: oldIds })).firmwareUpdate, "1.0.0");
  assert.equal((await admin.api.getDevice({ params: freshIds })).firmwareUpdate, null);

  await admin.uploadFirmware({ version: "1.1.0", board: "pico_w", bytes: good.pico_w });
  const devices = await admin.api.listDevices({ params: { projectId: project.id } });
  assert.deepEqual(
    devices.map((d) => [d.name, d.firmwareVersion, d.firmwareUpdate]),
    [
      ["old", "0.9.0", "1.1.0"],
      ["fresh", "1.0.0", "1.1.0"],
    ],
  );
});

test("firmware versions compare by semver precedence", () => {
  const ordered = [
    "0.9.0",
    "1.0.0-alpha",
    "1.0.0-alpha.1",
    "1.0.0-alpha.beta",
    "1.0.0-beta.2",
    "1.0.0-beta.11",
    "1.0.0-rc.1",
    "1.0.0",
    "1.9.0",
    "1.10.0",
    "2.0.0",
  ];
  for (let i = 0; i < ordered.length - 1; i++) {
    assert.equal(
      compareFirmwareVersions(ordered[i]!, ordered[i + 1]!),
      -1,
      `${ordered[i]} < ${ordered[i + 1]}`,
    );
    assert.equal(compareFirmwareVersions(ordered[i + 1]!, ordered[i]!), 1);
  }
  assert.equal(compareFirmwareVersions("1.0.0+build.1", "1.0.0"), 0);
  assert.equal(compareFirmwareVersions("sim-0.1.0", "1.0.0"), null);
  assert.equal(compareFirmwareVersions("01.0.0", "1.0.0"), null);
});
