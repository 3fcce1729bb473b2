// The config block (config-block.ts) and the server address rule, checked against the shared
// vectors the firmware's tests read too (packages/protocol/vectors).
import assert from "node:assert/strict";
import fs from "node:fs";
import { describe, test } from "node:test";
import zlib from "node:zlib";
import { docsDirUrl } from "@sdk/docs";
import {
  configBlockAround,
  configBlockBytes,
  configErrors,
  configFields,
  crc32,
  type DeviceConfig,
  decodeConfigBlock,
  deviceSocketUrl,
  encodeConfigBlock,
  encodeConfigFields,
} from "../src/index.ts";

const vectorsDir = new URL("../vectors/", import.meta.url);
const readVectors = (name: string) =>
  fs
    .readFileSync(new URL(name, vectorsDir), "utf8")
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as Record<string, string | boolean>);

const config: DeviceConfig = {
  deviceId: "dev_abcdefghij234567klmn",
  secret: "dsk_secret",
  wifiSsid: "Café",
  wifiPassphrase: "12345678",
  wifiCountry: "DE",
  server: "https://sdk.example.com:8443",
};

describe("config block", () => {
  test("crc32 is zlib's", () => {
    for (const text of ["", "a", "123456789", "x".repeat(5000)]) {
      const bytes = new TextEncoder().encode(text);
      assert.equal(crc32(bytes), zlib.crc32(bytes));
    }
    assert.equal(crc32(new TextEncoder().encode("123456789")), 0xcbf43926);
  });

  test("round trip, with and without the optional fields", () => {
    const caDer = Uint8Array.from({ length: 900 }, (_, i) => i & 0xff);
    const keyPin = new Uint8Array(32).fill(7);
    for (const c of [
      config,
      { ...config, wifiPassphrase: "", wifiCountry: "XX" },
      { ...config, caDer },
      { ...config, keyPin },
      { ...config, caDer, keyPin },
    ]) {
      const block = encodeConfigBlock(c);
      assert.equal(block.length, configBlockBytes);
      assert.deepEqual(decodeConfigBlock(block), { ok: true, config: c });
    }
  });

  test("the block is the header, the fields, then 0xFF", () => {
    const block = encodeConfigBlock(config);
    assert.deepEqual([...block.subarray(0, 8)], [0x53, 0x44, 0x4b, 0x43, 1, 0, 16, 0]);
    const view = new DataView(block.buffer);
    const length = view.getUint32(8, true);
    assert.equal(view.getUint32(12, true), zlib.crc32(block.subarray(16, 16 + length)));
    assert.equal(block[16], configFields[0]!.tag);
    assert.ok(block.subarray(16 + length).every((b) => b === 0xff));
  });

  test("encode refuses what a device could not use, naming the field", () => {
    const bad: [Partial<DeviceConfig>, RegExp][] = [
      [{ deviceId: "prj_abcdefghij234567klmn" }, /deviceId must match/],
      [{ deviceId: "dev_short" }, /deviceId/],
      [{ secret: "" }, /secret must be 1-128/],
      [{ secret: "x".repeat(129) }, /secret must be 1-128/],
      [{ secret: "tab\there" }, /secret must be printable/],
      [{ wifiSsid: "" }, /wifiSsid must be 1-32 bytes/],
      [{ wifiSsid: "é".repeat(17) }, /wifiSsid must be 1-32 bytes \(got 34\)/],
      [{ wifiSsid: "a\nb" }, /wifiSsid must not hold control/],
      [{ wifiPassphrase: "1234567" }, /wifiPassphrase must be empty .* or 8-63/],
      [{ wifiPassphrase: "x".repeat(64) }, /wifiPassphrase/],
      [{ wifiPassphrase: "pässwort" }, /wifiPassphrase must be printable/],
      [{ wifiCountry: "de" }, /wifiCountry must be two uppercase letters/],
      [{ wifiCountry: "DEU" }, /wifiCountry/],
      [{ server: "" }, /server must be 1-253/],
      [{ server: "x".repeat(254) }, /server must be 1-253/],
      [{ caDer: new Uint8Array(0) }, /caDer must not be empty/],
      [{ caDer: new Uint8Array(4000) }, /more than the 4080 a block holds/],
      [{ keyPin: new Uint8Array(31) }, /keyPin must be 32 bytes/],
    ];
    for (const [change, message] of bad) {
      assert.throws(() => encodeConfigBlock({ ...config, ...change }), message, JSON.stringify(change));
    }
  });

  test("the largest CA certificate that fits is written, one byte more is refused", () => {
    const others = encodeConfigBlock(config);
    const used = new DataView(others.buffer).getUint32(8, true);
    const room = configBlockBytes - 16 - used - 3;
    assert.equal(decodeConfigBlock(encodeConfigBlock({ ...config, caDer: new Uint8Array(room) })).ok, true);
    assert.throws(() => encodeConfigBlock({ ...config, caDer: new Uint8Array(room + 1) }));
  });

  test("decode: unknown tags are skipped, known ones may not repeat", () => {
    const fields = [
      { tag: 1, bytes: new TextEncoder().encode(config.deviceId) },
      { tag: 200, bytes: new Uint8Array(5) },
      { tag: 2, bytes: new TextEncoder().encode("s") },
      { tag: 3, bytes: new TextEncoder().encode("ssid") },
      { tag: 5, bytes: new TextEncoder().encode("XX") },
      { tag: 6, bytes: new TextEncoder().encode("h") },
    ];
    assert.equal(decodeConfigBlock(configBlockAround(encodeConfigFields(fields))).ok, true);
    assert.deepEqual(decodeConfigBlock(configBlockAround(encodeConfigFields([...fields, fields[3]!]))), {
      ok: false,
      error: "bad_field",
      field: "wifiSsid",
    });
  });

  test("docs/firmware.md lists every field and error as the table says", () => {
    const doc = fs.readFileSync(new URL("firmware.md", docsDirUrl), "utf8");
    for (const f of configFields) {
      const row = new RegExp(
        `^\\| ${f.tag} \\| \`${f.name}\` \\| ${f.minLength}–${f.maxLength} \\| ${f.required ? "yes" : "no"}[^|]* \\| ${f.kind} \\|$`,
        "m",
      );
      assert.match(doc, row, f.name);
    }
    for (const error of configErrors) {
      assert.match(doc, new RegExp(`^\\| \`${error}\` \\| \`SDK_CONFIG_${error.toUpperCase()}\` \\|`, "m"));
    }
  });

  test("every vector decodes to what it says", () => {
    const rows = readVectors("config-block.jsonl");
    const statuses = new Set(rows.map((r) => r.status));
    for (const error of configErrors) assert.ok(statuses.has(error), `a vector for ${error}`);
    assert.ok(statuses.has("ok"));
    for (const row of rows) {
      const decoded = decodeConfigBlock(Buffer.from(row.hex as string, "hex"));
      if (row.status !== "ok") {
        assert.equal(decoded.ok, false, row.name as string);
        if (decoded.ok) continue;
        assert.equal(decoded.error, row.status, row.name as string);
        assert.equal(decoded.field ?? "", row.field, row.name as string);
        continue;
      }
      assert.ok(decoded.ok, row.name as string);
      const { caDer, keyPin, ...text } = decoded.config;
      for (const [name, value] of Object.entries(text)) assert.equal(value, row[name], `${row.name} ${name}`);
      assert.equal(caDer ? Buffer.from(caDer).toString("hex") : "", row.caDer);
      assert.equal(keyPin ? Buffer.from(keyPin).toString("hex") : "", row.keyPin);
      // What decodes also encodes back to the same block, unless it held unknown tags.
      if (!(row.name as string).includes("unknown")) {
        assert.equal(
          Buffer.from(encodeConfigBlock(decoded.config)).toString("hex"),
          row.hex,
          row.name as string,
        );
      }
    }
  });
});

describe("server address → socket URL vectors", () => {
  const rows = readVectors("device-socket-url.jsonl");

  test("every vector is what deviceSocketUrl prints ('' when it throws)", () => {
    for (const row of rows) {
      let url = "";
      try {
        url = deviceSocketUrl(row.address as string);
      } catch {
        // refused
      }
      assert.equal(url, row.url, JSON.stringify(row.address));
    }
    assert.ok(rows.some((r) => r.url === "") && rows.some((r) => r.url !== ""));
  });

  test("every row of docs/protocol.md's table is a vector", () => {
    const doc = fs.readFileSync(new URL("protocol.md", docsDirUrl), "utf8");
    const section = doc.split("## The server address and the socket URL")[1]!.split("\n## ")[0]!;
    const table = [...section.matchAll(/^\| `([^`]+)` \| `([^`]+)`/gm)];
    assert.ok(table.length >= 8, "the table was found");
    for (const [, address, url] of table) {
      assert.ok(
        rows.some((r) => r.address === address && r.url === url && !r.firmwareRefuses),
        `${address} → ${url}`,
      );
    }
  });
});
