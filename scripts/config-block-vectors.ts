// Test vectors shared by the TypeScript and C sides (packages/protocol/vectors), written by
// `npm run generate:c-header`; a test fails when the committed files are stale.
//  - config-block.jsonl: whole config blocks in hex with what decodeConfigBlock says about them;
//    firmware/tests/config_test.c expects sdk_config_parse to say the same.
//  - device-socket-url.jsonl: server addresses with what deviceSocketUrl prints ("" when it throws);
//    firmware/tests/url_test.c expects sdk_url_from_address + sdk_url_format to print the same.
// Every line is a flat JSON object with string or boolean values, for a small C line reader.
import {
  configBlockAround,
  configBlockBytes,
  configFields,
  type DeviceConfig,
  decodeConfigBlock,
  deviceSocketUrl,
  encodeConfigBlock,
  encodeConfigFields,
} from "@sdk/protocol";

export const configBlockVectorsPath = new URL(
  "../packages/protocol/vectors/config-block.jsonl",
  import.meta.url,
);
export const deviceSocketUrlVectorsPath = new URL(
  "../packages/protocol/vectors/device-socket-url.jsonl",
  import.meta.url,
);

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString("hex");
const ascii = (text: string) => new TextEncoder().encode(text);
const tagOf = (name: string) => configFields.find((f) => f.name === name)!.tag;
/** Deterministic stand-ins for a certificate: the reader treats them as opaque bytes. */
const pattern = (length: number, seed: number) =>
  Uint8Array.from({ length }, (_, i) => (i === 0 ? 0x30 : (i * 31 + seed) & 0xff));

const minimal: DeviceConfig = {
  deviceId: "dev_abcdefghij234567klmn",
  secret: "dsk_Zm9vYmFyYmF6cXV4MDEyMzQ1Njc4OWFiY2RlZg",
  wifiSsid: "workshop",
  wifiPassphrase: "",
  wifiCountry: "XX",
  server: "192.168.1.10:8080",
};
const full: DeviceConfig = {
  deviceId: "dev_zyxwvutsrq765432ponm",
  secret: "dsk_c2VjcmV0IHdpdGggc3BhY2VzIGFuZCAhQCMk",
  wifiSsid: "Café WLAN 2.4 GHz",
  wifiPassphrase: "correct horse battery staple",
  wifiCountry: "DE",
  server: "https://sdk.example.com:8443",
  caDer: pattern(600, 7),
  keyPin: pattern(32, 99),
};

/** The required fields of `minimal` as TLV parts, to build bad payloads from. */
const parts = (config: DeviceConfig = minimal) => [
  { tag: tagOf("deviceId"), bytes: ascii(config.deviceId) },
  { tag: tagOf("secret"), bytes: ascii(config.secret) },
  { tag: tagOf("wifiSsid"), bytes: ascii(config.wifiSsid) },
  { tag: tagOf("wifiCountry"), bytes: ascii(config.wifiCountry) },
  { tag: tagOf("server"), bytes: ascii(config.server) },
];
const withField = (name: string, bytes: Uint8Array) =>
  configBlockAround(encodeConfigFields([...parts(), { tag: tagOf(name), bytes }]));
const replaced = (name: string, bytes: Uint8Array) =>
  configBlockAround(
    encodeConfigFields(parts().map((p) => (p.tag === tagOf(name) ? { tag: p.tag, bytes } : p))),
  );

function blocks(): [string, Uint8Array][] {
  const good = encodeConfigBlock(minimal);
  const payloadLength = new DataView(good.buffer).getUint32(8, true);
  const flipped = good.slice();
  flipped[16 + 5]! ^= 0x01;
  const overrun = encodeConfigFields(parts());
  overrun[overrun.length - minimal.server.length - 2] = 0xff; // server's length, low byte: 255 > what is left
  const fullSize = configBlockBytes - 16 - encodeConfigFields(parts()).length - 3;
  return [
    ["minimal (open network)", good],
    ["all fields", encodeConfigBlock(full)],
    ["CA certificate", encodeConfigBlock({ ...minimal, caDer: pattern(1200, 3) })],
    ["key pin", encodeConfigBlock({ ...minimal, server: "sdk.example.com", keyPin: pattern(32, 1) })],
    ["largest CA certificate that fits", encodeConfigBlock({ ...minimal, caDer: pattern(fullSize, 5) })],
    [
      "unknown tags skipped",
      configBlockAround(
        encodeConfigFields([
          { tag: 0x42, bytes: ascii("from a newer sdk") },
          ...parts(),
          { tag: 0, bytes: new Uint8Array(0) },
          { tag: 0x42, bytes: new Uint8Array([0, 1, 2]) },
          { tag: 0xff, bytes: pattern(40, 2) },
        ]),
      ),
    ],
    ["erased (all 0xFF)", new Uint8Array(configBlockBytes).fill(0xff)],
    ["truncated (half a sector)", good.slice(0, configBlockBytes / 2)],
    ["truncated (one byte short)", good.slice(0, configBlockBytes - 1)],
    ["longer than a sector", Uint8Array.from([...good, 0xff])],
    ["bad magic", configBlockAround(encodeConfigFields(parts()), { magic: "SDKX" })],
    ["all zero", new Uint8Array(configBlockBytes)],
    ["bad version", configBlockAround(encodeConfigFields(parts()), { version: 2 })],
    [
      "length beyond the block",
      configBlockAround(encodeConfigFields(parts()), { length: configBlockBytes - 15 }),
    ],
    ["header size too small", configBlockAround(encodeConfigFields(parts()), { headerBytes: 8 })],
    ["header size beyond the block", configBlockAround(encodeConfigFields(parts()), { headerBytes: 0x9010 })],
    ["length 0xFFFFFFFF", configBlockAround(encodeConfigFields(parts()), { length: 0xffffffff })],
    ["bad crc (one payload bit flipped)", flipped],
    [
      "bad crc (length one short)",
      configBlockAround(encodeConfigFields(parts()), { length: payloadLength - 1 }),
    ],
    ["field overruns the payload", configBlockAround(overrun)],
    [
      "field header cut short",
      configBlockAround(Uint8Array.from([...encodeConfigFields(parts()), tagOf("keyPin"), 32])),
    ],
    ["too-long SSID (33 bytes)", replaced("wifiSsid", ascii("x".repeat(33)))],
    ["too-short passphrase (7)", withField("wifiPassphrase", ascii("1234567"))],
    ["empty server", replaced("server", new Uint8Array(0))],
    ["key pin of 31 bytes", withField("keyPin", pattern(32, 1).subarray(0, 31))],
    [
      "duplicate device id",
      configBlockAround(
        encodeConfigFields([...parts(), { tag: tagOf("deviceId"), bytes: ascii(minimal.deviceId) }]),
      ),
    ],
    ["missing device id", configBlockAround(encodeConfigFields(parts().slice(1)))],
    ["missing server", configBlockAround(encodeConfigFields(parts().slice(0, 4)))],
    ["non-printable secret", replaced("secret", ascii("dsk_tab\there"))],
    ["secret with a NUL", replaced("secret", ascii("dsk_\u0000"))],
    ["SSID not UTF-8", replaced("wifiSsid", Uint8Array.from([0x43, 0x61, 0x66, 0xe9]))],
    ["SSID with a control character", replaced("wifiSsid", ascii("line\nbreak"))],
    ["country of three letters", replaced("wifiCountry", ascii("DEU"))],
  ];
}

/** One JSON line per block: {"name","hex","status","field", and for ok blocks every field}. */
export function renderConfigBlockVectors(): string {
  const lines = blocks().map(([name, block]) => {
    const decoded = decodeConfigBlock(block);
    const row: Record<string, string> = {
      name,
      hex: hex(block),
      status: decoded.ok ? "ok" : decoded.error,
      field: decoded.ok ? "" : (decoded.field ?? ""),
    };
    if (decoded.ok) {
      const { caDer, keyPin, ...text } = decoded.config;
      Object.assign(row, text, { caDer: caDer ? hex(caDer) : "", keyPin: keyPin ? hex(keyPin) : "" });
    }
    return JSON.stringify(row);
  });
  return `${lines.join("\n")}\n`;
}

/** Addresses the firmware refuses although deviceSocketUrl prints a URL (docs/firmware.md says why). */
export const firmwareRefusedAddresses = [
  "https://user:pw@sdk.example.com",
  "https://@@sdk.example.com",
  "https://sdk.example.com/?token=1",
  "https://sdk.example.com/#top",
  "bücher.example",
];

/** Server addresses: every row of docs/protocol.md's table, then edge cases. */
const addresses = [
  "192.168.1.10:8080",
  "localhost:8080",
  "[::1]:8080",
  "sdk.example.com",
  "sdk.example.com:443",
  "192.168.1.10:80",
  "https://sdk.example.com",
  "https://sdk.example.com:8443/base",
  "http://10.0.0.5:8080/",
  // whitespace and trailing slashes
  "  sdk.example.com  ",
  "\tsdk.example.com/ \n",
  "sdk.example.com///",
  "https://sdk.example.com/",
  " http://10.0.0.5:8080// ",
  "sdk.exa\tmple.com",
  "sdk.example.com\u0001",
  // schemes
  "HTTPS://SDK.Example.COM",
  "WsS://a:444/b/c//",
  "ws://sdk.example.com",
  "wss://sdk.example.com:8443",
  "http://sdk.example.com",
  "HTTP://a:80",
  "ftp://files.example.com",
  "https:///sdk.example.com",
  "https:\\\\sdk.example.com",
  "https://",
  // default ports
  "ws://x:80",
  "wss://x:443",
  "https://x:443",
  "http://x:80",
  "https://x:80",
  "http://x:443",
  "ws://x:443",
  "wss://x:80",
  "https://x:",
  "host:80",
  "host:443",
  "host:",
  "host:08080",
  "host:0",
  "host:65535",
  // paths, queries and the like after a bare host
  "sdk.example.com/base",
  "sdk.example.com:8080/base?x=1#y",
  "sdk.example.com?x",
  "sdk.example.com\\path",
  "user@sdk.example.com:8080",
  "https://@sdk.example.com",
  "https://:@sdk.example.com:8443",
  "///sdk.example.com",
  // hosts
  "SDK.EXAMPLE.COM",
  "sdk.example.com.",
  "a..b",
  "-odd_host!",
  "ex%41mple.com",
  "xn--mnchen-3ya.de",
  "127.0.0.1",
  "127.1:8080",
  "0x7f.0.0.1",
  "0177.0.0.1",
  "1.2.3",
  "4294967295",
  "0x",
  "10.0.0.5.",
  "[::1]",
  "[::1]:80",
  "[0:0:0:0:0:0:0:1]:8080",
  "[2001:DB8::A:0:0:1]:8080",
  "[2001:db8:0:0:1:0:0:1]",
  "[1:0:0:2:0:0:0:3]",
  "[::ffff:192.168.1.10]:8080",
  "[::]",
  "https://[::1]",
  "https://[fe80::1]:8443/x",
  // refused
  "",
  "   ",
  "/",
  "host:65536",
  "host:80x",
  "host:-1",
  ":8080",
  "h:p",
  "1.2.3.256",
  "1.2.3.4.5",
  "4294967296",
  "99999999999999999999",
  "x.0x",
  "a.1",
  "x%2fy",
  "x%zz",
  "bad host",
  "bad<host>",
  "a|b",
  "[::1",
  "[::1]x",
  "[::1]:x",
  "[1:2:3:4:5:6:7:8:9]",
  "[::1::2]",
  "[12345::]",
  "[::ffff:1.2.3]",
  "[::ffff:1.2.3.04]",
  "[fe80::1%25eth0]",
  "https://:8080",
  "user@",
  ...firmwareRefusedAddresses,
];

/** One JSON line per address: {"address","url"} ("" when deviceSocketUrl throws), and firmwareRefuses. */
export function renderDeviceSocketUrlVectors(): string {
  const lines = addresses.map((address) => {
    let url = "";
    try {
      url = deviceSocketUrl(address);
    } catch {
      // refused: url stays ""
    }
    const row: Record<string, string | boolean> = { address, url };
    if (firmwareRefusedAddresses.includes(address)) row.firmwareRefuses = true;
    return JSON.stringify(row);
  });
  return `${lines.join("\n")}\n`;
}
