import { idPattern } from "./ids.ts";

/**
 * The config block: one 4096-byte flash sector holding a device's credentials, Wi-Fi and server
 * address (on the Linux host build, a file with the same bytes). `sdk flash` writes it with
 * `encodeConfigBlock`; the firmware reads it with sdk_config_parse (firmware/core/sdk_config.c),
 * whose constants and field table are generated from this file into sdk_protocol.h.
 *
 * Header (little-endian), then the payload, then 0xFF to the end of the sector:
 *
 *   offset 0   4 bytes  magic "SDKC"
 *   offset 4   u16      layout version (1)
 *   offset 6   u16      header size (16); the payload starts here
 *   offset 8   u32      payload length
 *   offset 12  u32      CRC-32 (IEEE, zlib's) of the payload
 *
 * The payload is a sequence of fields: tag (u8), length (u16), that many bytes. Readers skip tags
 * they do not know, and refuse a known tag that repeats.
 */
export const configBlockBytes = 4096;
export const configMagic = "SDKC";
export const configLayoutVersion = 1;
export const configHeaderBytes = 16;
/** Tag byte and u16 length before each field's bytes. */
export const configFieldHeaderBytes = 3;

/**
 * text: printable ASCII (0x20–0x7E). utf8: valid UTF-8 without control characters (a Wi-Fi SSID).
 * bytes: anything.
 */
export type ConfigFieldKind = "text" | "utf8" | "bytes";

export type ConfigFieldName =
  | "deviceId"
  | "secret"
  | "wifiSsid"
  | "wifiPassphrase"
  | "wifiCountry"
  | "server"
  | "caDer"
  | "keyPin";

export type ConfigField = {
  tag: number;
  name: ConfigFieldName;
  /** Length bounds in bytes of a field that is present. */
  minLength: number;
  maxLength: number;
  required: boolean;
  kind: ConfigFieldKind;
};

/** The known fields, by tag. A reader refuses a present field outside its bounds or kind. */
export const configFields: readonly ConfigField[] = [
  { tag: 1, name: "deviceId", minLength: 1, maxLength: 64, required: true, kind: "text" },
  { tag: 2, name: "secret", minLength: 1, maxLength: 128, required: true, kind: "text" },
  { tag: 3, name: "wifiSsid", minLength: 1, maxLength: 32, required: true, kind: "utf8" },
  { tag: 4, name: "wifiPassphrase", minLength: 8, maxLength: 63, required: false, kind: "text" },
  { tag: 5, name: "wifiCountry", minLength: 2, maxLength: 2, required: true, kind: "text" },
  { tag: 6, name: "server", minLength: 1, maxLength: 253, required: true, kind: "text" },
  {
    tag: 7,
    name: "caDer",
    minLength: 1,
    maxLength: configBlockBytes - configHeaderBytes - configFieldHeaderBytes,
    required: false,
    kind: "bytes",
  },
  { tag: 8, name: "keyPin", minLength: 32, maxLength: 32, required: false, kind: "bytes" },
];

/** What a config block holds. An empty passphrase means an open network (the field is omitted). */
export type DeviceConfig = {
  deviceId: string;
  secret: string;
  wifiSsid: string;
  wifiPassphrase: string;
  /** Two uppercase letters (ISO 3166-1), or "XX" for the worldwide settings. */
  wifiCountry: string;
  /** The server address as typed; the socket URL follows deviceSocketUrl. */
  server: string;
  /** The server's CA certificate (DER), for wss://. */
  caDer?: Uint8Array;
  /** SHA-256 of the server certificate's SubjectPublicKeyInfo (DER), for wss://. */
  keyPin?: Uint8Array;
};

/** The reasons a block is refused; the same names as sdk_config_status in firmware/core/sdk_config.h. */
export const configErrors = [
  "erased",
  "truncated",
  "bad_magic",
  "bad_version",
  "bad_length",
  "bad_crc",
  "bad_field",
  "missing_field",
] as const;
export type ConfigError = (typeof configErrors)[number];

export type DecodedConfigBlock =
  | { ok: true; config: DeviceConfig }
  | { ok: false; error: ConfigError; field?: ConfigFieldName };

// ---------------------------------------------------------------- CRC-32

let crcTable: Uint32Array | undefined;

/** CRC-32 (IEEE 802.3, reflected, as zlib's crc32). Pure TypeScript: the dashboard bundles this package. */
export function crc32(data: Uint8Array): number {
  if (!crcTable) {
    crcTable = new Uint32Array(256);
    for (let n = 0; n < 256; n++) {
      let c = n;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      crcTable[n] = c >>> 0;
    }
  }
  let crc = 0xffffffff;
  for (const byte of data) crc = crcTable[(crc ^ byte) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

// ---------------------------------------------------------------- field rules

const isPrintable = (bytes: Uint8Array) => bytes.every((b) => b >= 0x20 && b <= 0x7e);
const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** The text of utf8 bytes without control characters, or null. */
function utf8Text(bytes: Uint8Array): string | null {
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    return null;
  }
  return bytes.some((b) => b < 0x20 || b === 0x7f) ? null : text;
}

/** Whether a present field's bytes obey its table row. */
function fieldBytesValid(field: ConfigField, bytes: Uint8Array): boolean {
  if (bytes.length < field.minLength || bytes.length > field.maxLength) return false;
  if (field.kind === "text") return isPrintable(bytes);
  if (field.kind === "utf8") return utf8Text(bytes) !== null;
  return true;
}

// ---------------------------------------------------------------- writer

const textEncoder = new TextEncoder();

/** The field's bytes, or a sentence saying why the value cannot be written. */
function fieldValue(name: ConfigFieldName, config: DeviceConfig): Uint8Array | string | undefined {
  const text = (value: unknown, what: string): Uint8Array | string => {
    if (typeof value !== "string") return `${what} must be a string`;
    const bytes = textEncoder.encode(value);
    return isPrintable(bytes) ? bytes : `${what} must be printable ASCII (0x20-0x7E)`;
  };
  switch (name) {
    case "deviceId": {
      const pattern = idPattern("dev");
      if (typeof config.deviceId !== "string" || !pattern.test(config.deviceId))
        return `deviceId must match ${pattern.source} (got ${JSON.stringify(config.deviceId)})`;
      return textEncoder.encode(config.deviceId);
    }
    case "secret": {
      const bytes = text(config.secret, "secret");
      if (typeof bytes === "string") return bytes;
      return bytes.length >= 1 && bytes.length <= 128 ? bytes : "secret must be 1-128 characters";
    }
    case "wifiSsid": {
      if (typeof config.wifiSsid !== "string") return "wifiSsid must be a string";
      const bytes = textEncoder.encode(config.wifiSsid);
      if (bytes.length < 1 || bytes.length > 32) return `wifiSsid must be 1-32 bytes (got ${bytes.length})`;
      return utf8Text(bytes) === null ? "wifiSsid must not hold control characters" : bytes;
    }
    case "wifiPassphrase": {
      const bytes = text(config.wifiPassphrase, "wifiPassphrase");
      if (typeof bytes === "string") return bytes;
      if (bytes.length === 0) return undefined;
      return bytes.length >= 8 && bytes.length <= 63
        ? bytes
        : `wifiPassphrase must be empty (an open network) or 8-63 characters (got ${bytes.length})`;
    }
    case "wifiCountry":
      return typeof config.wifiCountry === "string" && /^[A-Z]{2}$/.test(config.wifiCountry)
        ? textEncoder.encode(config.wifiCountry)
        : `wifiCountry must be two uppercase letters, "XX" for worldwide (got ${JSON.stringify(config.wifiCountry)})`;
    case "server": {
      const bytes = text(config.server, "server");
      if (typeof bytes === "string") return bytes;
      return bytes.length >= 1 && bytes.length <= 253 ? bytes : "server must be 1-253 characters";
    }
    case "caDer":
      if (config.caDer === undefined) return undefined;
      if (!(config.caDer instanceof Uint8Array)) return "caDer must be bytes";
      return config.caDer.length >= 1 ? config.caDer : "caDer must not be empty";
    case "keyPin":
      if (config.keyPin === undefined) return undefined;
      if (!(config.keyPin instanceof Uint8Array) || config.keyPin.length !== 32)
        return "keyPin must be 32 bytes (a SHA-256)";
      return config.keyPin;
  }
}

/** The fields as TLV bytes, in the table's order, with no check at all (for tests that build bad blocks). */
export function encodeConfigFields(fields: readonly { tag: number; bytes: Uint8Array }[]): Uint8Array {
  const out = new Uint8Array(fields.reduce((n, f) => n + configFieldHeaderBytes + f.bytes.length, 0));
  let at = 0;
  for (const { tag, bytes } of fields) {
    out[at] = tag;
    out[at + 1] = bytes.length & 0xff;
    out[at + 2] = (bytes.length >>> 8) & 0xff;
    out.set(bytes, at + configFieldHeaderBytes);
    at += configFieldHeaderBytes + bytes.length;
  }
  return out;
}

/** A whole block around a payload, with a correct header unless `header` says otherwise. */
export function configBlockAround(
  payload: Uint8Array,
  header: { magic?: string; version?: number; headerBytes?: number; length?: number; crc?: number } = {},
): Uint8Array {
  const block = new Uint8Array(configBlockBytes).fill(0xff);
  const view = new DataView(block.buffer);
  block.set(textEncoder.encode(header.magic ?? configMagic).subarray(0, 4), 0);
  view.setUint16(4, header.version ?? configLayoutVersion, true);
  view.setUint16(6, header.headerBytes ?? configHeaderBytes, true);
  view.setUint32(8, header.length ?? payload.length, true);
  view.setUint32(12, header.crc ?? crc32(payload), true);
  block.set(payload.subarray(0, configBlockBytes - configHeaderBytes), configHeaderBytes);
  return block;
}

/** The 4096-byte block for a config. Throws an Error naming the field when a value cannot be written. */
export function encodeConfigBlock(config: DeviceConfig): Uint8Array {
  const fields: { tag: number; bytes: Uint8Array }[] = [];
  for (const field of configFields) {
    const value = fieldValue(field.name, config);
    if (typeof value === "string") throw new Error(`config block: ${value}`);
    if (value !== undefined) fields.push({ tag: field.tag, bytes: value });
  }
  const payload = encodeConfigFields(fields);
  const room = configBlockBytes - configHeaderBytes;
  if (payload.length > room) {
    throw new Error(
      `config block: the fields take ${payload.length} bytes, more than the ${room} a block holds (is caDer a whole chain? one CA certificate is enough)`,
    );
  }
  return configBlockAround(payload);
}

// ---------------------------------------------------------------- reader

/** Reads a block exactly as the firmware does (sdk_config_parse). */
export function decodeConfigBlock(block: Uint8Array): DecodedConfigBlock {
  const fail = (error: ConfigError, field?: ConfigFieldName): DecodedConfigBlock =>
    field ? { ok: false, error, field } : { ok: false, error };
  if (block.length < configBlockBytes) return fail("truncated");
  if (block.length > configBlockBytes) return fail("bad_length");
  if (block.subarray(0, configHeaderBytes).every((b) => b === 0xff)) return fail("erased");
  const view = new DataView(block.buffer, block.byteOffset, block.byteLength);
  if (!block.subarray(0, 4).every((b, i) => b === configMagic.charCodeAt(i))) return fail("bad_magic");
  if (view.getUint16(4, true) !== configLayoutVersion) return fail("bad_version");
  const headerBytes = view.getUint16(6, true);
  const length = view.getUint32(8, true);
  if (headerBytes < configHeaderBytes || length > configBlockBytes - headerBytes) return fail("bad_length");
  const payload = block.subarray(headerBytes, headerBytes + length);
  if (crc32(payload) !== view.getUint32(12, true)) return fail("bad_crc");

  const found = new Map<ConfigFieldName, Uint8Array>();
  let at = 0;
  while (at < payload.length) {
    if (payload.length - at < configFieldHeaderBytes) return fail("bad_field");
    const tag = payload[at]!;
    const size = payload[at + 1]! | (payload[at + 2]! << 8);
    const field = configFields.find((f) => f.tag === tag);
    at += configFieldHeaderBytes;
    if (size > payload.length - at) return fail("bad_field", field?.name);
    const bytes = payload.subarray(at, at + size);
    at += size;
    if (!field) continue;
    if (found.has(field.name) || !fieldBytesValid(field, bytes)) return fail("bad_field", field.name);
    found.set(field.name, bytes);
  }
  for (const field of configFields) {
    if (field.required && !found.has(field.name)) return fail("missing_field", field.name);
  }
  const text = (name: ConfigFieldName) => {
    const bytes = found.get(name);
    return bytes ? new TextDecoder().decode(bytes) : "";
  };
  const config: DeviceConfig = {
    deviceId: text("deviceId"),
    secret: text("secret"),
    wifiSsid: text("wifiSsid"),
    wifiPassphrase: text("wifiPassphrase"),
    wifiCountry: text("wifiCountry"),
    server: text("server"),
  };
  const caDer = found.get("caDer");
  const keyPin = found.get("keyPin");
  if (caDer) config.caDer = caDer.slice();
  if (keyPin) config.keyPin = keyPin.slice();
  return { ok: true, config };
}
