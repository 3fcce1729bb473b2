import type { CreatedDevices } from "@sdk/protocol";

/** One row of a provisioning file, before the server checks it. */
export interface DeviceRow {
  name: unknown;
  board: unknown;
  tags?: unknown;
}

/** Splits CSV text into rows of fields (RFC 4180: quotes, doubled quotes, CRLF). */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = "";
  let quoted = false;
  let i = 0;
  const endField = () => {
    row.push(field);
    field = "";
  };
  const endRow = () => {
    endField();
    if (!(row.length === 1 && row[0] === "")) rows.push(row);
    row = [];
  };
  const body = text.replace(/^\uFEFF/, "");
  while (i < body.length) {
    const c = body[i]!;
    if (quoted) {
      if (c === '"' && body[i + 1] === '"') {
        field += '"';
        i += 2;
        continue;
      }
      if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"' && field === "") quoted = true;
    else if (c === ",") endField();
    else if (c === "\n") endRow();
    else if (c !== "\r") field += c;
    i++;
  }
  if (field !== "" || row.length > 0) endRow();
  return rows;
}

/**
 * The devices of a provisioning file: JSON (an array of `{name, board, tags}` or `{devices: [...]}`)
 * or CSV with a header row naming `name`, `board` and optionally `tags` (separated by spaces or `;`).
 * Throws an Error naming the line when the file cannot be read as either.
 */
export function parseDeviceFile(text: string, fileName: string): DeviceRow[] {
  const trimmed = text.trim();
  if (/\.json$/i.test(fileName) || trimmed.startsWith("[") || trimmed.startsWith("{")) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(trimmed);
    } catch (error) {
      throw new Error(`${fileName} is not valid JSON: ${(error as Error).message}`);
    }
    const list = Array.isArray(parsed) ? parsed : (parsed as { devices?: unknown })?.devices;
    if (!Array.isArray(list))
      throw new Error(`${fileName}: expected a JSON array of devices, or an object with a "devices" array`);
    return list as DeviceRow[];
  }
  const [header, ...rows] = parseCsv(text);
  if (!header) throw new Error(`${fileName} is empty`);
  const columns = header.map((h) => h.trim().toLowerCase());
  for (const needed of ["name", "board"])
    if (!columns.includes(needed))
      throw new Error(`${fileName}: the CSV header must name the columns name, board (and optionally tags)`);
  return rows.map((fields) => {
    const get = (column: string) => {
      const at = columns.indexOf(column);
      return at < 0 ? undefined : (fields[at] ?? "").trim();
    };
    const tags = get("tags");
    return {
      name: get("name"),
      board: get("board"),
      tags: tags ? tags.split(/[\s;]+/).filter((t) => t !== "") : [],
    };
  });
}

const csvField = (value: string) => (/[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value);

/** The credentials file: JSON, or CSV when the name ends in .csv. */
export function formatCredentials(created: CreatedDevices, fileName: string): string {
  const rows = created.devices.map(({ device, credentials }) => ({
    deviceId: device.id,
    name: device.name,
    board: device.board,
    tags: device.tags,
    secret: credentials.secret,
  }));
  if (!/\.csv$/i.test(fileName)) return `${JSON.stringify({ devices: rows }, null, 2)}\n`;
  const lines = ["device_id,name,board,tags,secret"];
  for (const r of rows)
    lines.push([r.deviceId, r.name, r.board, r.tags.join(";"), r.secret].map(csvField).join(","));
  return `${lines.join("\n")}\n`;
}
