import type { CreatedDevices } from "@sdk/protocol";

/** One row of a provisioning file, before the server checks it. */
interface DeviceRow {
  name: unknown;
  board: unknown;
  tags?: unknown;
}

/** A CSV record and the file line it starts on (1-based; the header is line 1). */
interface CsvRecord {
  line: number;
  fields: string[];
}

/**
 * Splits CSV text into records (RFC 4180: quotes, doubled quotes, CRLF). Throws an Error naming the
 * line for a quote that is never closed or text right after a closing quote.
 */
function parseCsv(text: string, fileName: string): CsvRecord[] {
  const records: CsvRecord[] = [];
  let fields: string[] = [];
  let field = "";
  let quoted = false;
  let closed = false;
  let line = 1;
  let recordLine = 1;
  let quoteLine = 1;
  const endField = () => {
    fields.push(field);
    field = "";
    closed = false;
  };
  const endRecord = () => {
    endField();
    if (!(fields.length === 1 && fields[0] === "")) records.push({ line: recordLine, fields });
    fields = [];
  };
  const body = text.replace(/^\uFEFF/, "");
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (quoted) {
      if (c === '"' && body[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') {
        quoted = false;
        closed = true;
      } else {
        if (c === "\n") line++;
        field += c;
      }
      continue;
    }
    if (c === ",") endField();
    else if (c === "\n") {
      endRecord();
      line++;
      recordLine = line;
    } else if (c === "\r") continue;
    else if (closed)
      throw new Error(
        `${fileName} line ${line}: unexpected text after a closing quote (write a quote inside a quoted field as "")`,
      );
    else if (c === '"' && field === "") {
      quoted = true;
      quoteLine = line;
    } else field += c;
  }
  if (quoted)
    throw new Error(
      `${fileName} line ${quoteLine}: a quoted field is never closed (the quote opened here runs to the end of the file)`,
    );
  if (field !== "" || fields.length > 0 || closed) endRecord();
  return records;
}

/** The rows of a provisioning file and, for CSV, the file line of each row. */
export interface DeviceFile {
  rows: DeviceRow[];
  lines?: number[];
}

/**
 * The devices of a provisioning file: JSON (an array of `{name, board, tags}` or `{devices: [...]}`)
 * or CSV with a header row naming `name`, `board` and optionally `tags` (separated by spaces or `;`).
 * Throws an Error naming the line when the file cannot be read as either.
 */
export function parseDeviceFile(text: string, fileName: string): DeviceFile {
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
    return { rows: list as DeviceRow[] };
  }
  const [header, ...records] = parseCsv(text, fileName);
  if (!header) throw new Error(`${fileName} is empty`);
  const columns = header.fields.map((h) => h.trim().toLowerCase());
  for (const needed of ["name", "board"])
    if (!columns.includes(needed))
      throw new Error(
        `${fileName} line ${header.line}: the CSV header must name the columns name, board (and optionally tags)`,
      );
  for (const { line, fields } of records)
    if (fields.length > columns.length)
      throw new Error(
        `${fileName} line ${line}: ${fields.length} fields but the header names ${columns.length} (quote a field that holds a comma)`,
      );
  const rows = records.map(({ fields }) => {
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
  return { rows, lines: records.map((r) => r.line) };
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
