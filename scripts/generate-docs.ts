// Writes docs/errors.md and docs/api.md from @sdk/protocol (the error catalog and the endpoint
// table): `node scripts/generate-docs.ts`. A test fails when the files and the code disagree.
import fs from "node:fs";
import { fileURLToPath } from "node:url";
import { docsDirUrl } from "@sdk/docs";
import { type Endpoint, endpoints, errorCatalog, errorCodes } from "@sdk/protocol";
import { z } from "zod";
import { alertsSection } from "./api-docs-alerts.ts";

export function renderErrorDocs(): string {
  const lines = [
    "# Error reference",
    "",
    "Every error answer of the REST API has the same shape:",
    "",
    "```json",
    '{ "success": false, "error": { "code": "not_found", "message": "No such project", "docs": "http://localhost:8080/docs/errors#not_found" } }',
    "```",
    "",
    "- `code` is stable: branch on it. `message` is for people and may change.",
    "- `docs` links to this reference as the server itself serves it (`/docs/errors#<code>`).",
    '- `invalid_request` errors also carry `fields`: `[{ "path": "email", "message": "must be a valid email address" }]`.',
    "- `rate_limited` and `deploys_throttled` answers carry a `Retry-After` header (seconds).",
    "",
    "This file is generated from the catalog in `packages/protocol/src/errors.ts` by",
    "`node scripts/generate-docs.ts`.",
    "",
    "| code | HTTP status | message |",
    "| --- | --- | --- |",
    ...errorCodes.map(
      (code) => `| [\`${code}\`](#${code}) | ${errorCatalog[code].status} | ${errorCatalog[code].message} |`,
    ),
    "",
  ];
  for (const code of errorCodes) {
    const e = errorCatalog[code];
    lines.push(`## ${code}`, "", `HTTP ${e.status}. Message: "${e.message}".`, "", e.description, "");
  }
  return lines.join("\n");
}

type JsonSchema = {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  enum?: unknown[];
  anyOf?: JsonSchema[];
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  default?: unknown;
  description?: string;
  format?: string;
  pattern?: string;
  const?: unknown;
};

function typeOf(s: JsonSchema): string {
  if (s.enum) return s.enum.map((v) => JSON.stringify(v)).join(" \\| ");
  if (s.const !== undefined) return JSON.stringify(s.const);
  if (s.anyOf) return s.anyOf.map(typeOf).join(" \\| ");
  if (s.type === "array") return `${s.items ? typeOf(s.items) : "unknown"}[]`;
  if (Array.isArray(s.type)) return s.type.join(" \\| ");
  return s.format ? `${s.type} (${s.format})` : (s.type ?? "any");
}

function constraints(s: JsonSchema): string {
  const parts: string[] = [];
  if (s.minLength !== undefined) parts.push(`min ${s.minLength} chars`);
  if (s.maxLength !== undefined) parts.push(`max ${s.maxLength} chars`);
  if (s.minimum !== undefined) parts.push(`≥ ${s.minimum}`);
  if (s.maximum !== undefined) parts.push(`≤ ${s.maximum}`);
  if (s.default !== undefined) parts.push(`default ${JSON.stringify(s.default)}`);
  if (s.description) parts.push(s.description);
  return parts.join("; ");
}

function fieldTable(schema: z.ZodType, io: "input" | "output"): string[] {
  const json = z.toJSONSchema(schema, { io, unrepresentable: "any" }) as JsonSchema;
  const target = json.type === "array" && json.items ? json.items : json;
  if (!target.properties) return [`Type: \`${typeOf(json)}\``];
  const rows = Object.entries(target.properties).map(
    ([name, s]) =>
      `| \`${name}\` | ${typeOf(s)} | ${target.required?.includes(name) ? "yes" : "no"} | ${constraints(s)} |`,
  );
  return [
    ...(json.type === "array" ? ["An array of objects with:", ""] : []),
    "| field | type | required | notes |",
    "| --- | --- | --- | --- |",
    ...rows,
  ];
}

const accessText = { public: "no authentication", user: "signed in", admin: "admins only" } as const;

export function renderApiDocs(): string {
  const lines = [
    "# REST API",
    "",
    "All paths are under the server's one port (default 8080). This file is generated from the",
    "endpoint table in `packages/protocol/src/endpoints.ts` by `node scripts/generate-docs.ts`; the same",
    "table drives the server's routes, the `@sdk/client` package and `/v1/openapi.json`.",
    "",
    "## Conventions",
    "",
    "- Bodies are JSON (`Content-Type: application/json`, at most 1 MiB) except the firmware upload's raw UF2",
    "  (`application/octet-stream`, at most 4 MiB). Other content types get 415.",
    '- Success: `{ "success": true, "result": … }`. Error: `{ "success": false, "error": { "code", "message", "docs" } }`',
    "  (see [errors.md](errors.md)). Invalid input answers 400 `invalid_request` with `fields` naming each bad field.",
    "- JSON bodies must be UTF-8 (invalid bytes are refused, never replaced by U+FFFD), nest arrays and objects",
    "  at most 64 levels deep (`maxJsonDepth`), hold only finite numbers (`1e999` is refused, not stored as null)",
    "  and no `__proto__` key or `constructor.prototype` (prototype poisoning). Each refusal says which rule.",
    "- Names (projects, devices, API tokens, Home Assistant entities) are normalised to NFC and trimmed, then must",
    "  be valid Unicode (no lone surrogates), printable (no control characters), free of bidirectional controls",
    "  (U+202E and the like) and not blank once invisible characters (zero-width spaces, …) are removed.",
    "  Environment variable values must not contain NUL (U+0000): shells and C programs end text there.",
    "- Every error, the framework's own included (an unknown path, a malformed URL, a body too large), has the",
    "  error shape below; a plain HTTP request to a WebSocket path answers 426 `upgrade_required`.",
    "- Ids are opaque strings with a prefix: `usr_`, `prj_`, `dev_`, `tok_`. Times are ISO 8601 in UTC.",
    "- A project that does not exist and a project you may not see both answer 404 `not_found`.",
    "",
    "## Authentication",
    "",
    "- **API token** (CLI, CI, Home Assistant, curl): `Authorization: Bearer sdk_…`. Get one from",
    '  `POST /v1/auth/login` or `/v1/auth/register` with `"issueToken": true`, or create named ones with',
    "  `POST /v1/tokens`. The token is shown once; only its hash is stored.",
    "- **Session cookie** (browsers): login and register set `sdk_session` (HttpOnly, SameSite=Lax,",
    "  Secure over HTTPS). State-changing requests that the browser marks as cross-site are refused",
    "  with 403 `cross_site_request`.",
    "- When both are sent, the token wins. A credential that does not check out is a 401, never anonymous.",
    "- Login and register are rate limited (429 `rate_limited`, message `Rate limit exceeded`, `Retry-After`).",
    "",
    "## Health",
    "",
    '- `GET /health` → `{ "success": true, "result": { "status": "ok" } }`. Never touches the database.',
    '- `GET /ready` → `{ "success": true, "result": { "status": "ready", "database": "sqlite" | "postgres", … } }` after a real',
    "  test write to the database succeeded; 503 `database_unavailable` when it did not. The result also",
    "  says how full the disk is: `databaseBytes` (the SQLite file, or `pg_database_size`),",
    "  `databaseFreeBytes` (SQLite: free pages inside the file not yet given back), `databaseWalBytes`",
    "  (SQLite: the write-ahead log `sdk.db-wal`, on disk besides the file; 0 with PostgreSQL), `dataDirFreeBytes`",
    "  (free space of `DATA_DIR`'s filesystem, `null` when unknown), `databaseMaxBytes` (`DATABASE_MAX_MB`,",
    "  `null` for no cap) and `diskLow` (less than `DISK_LOW_MB` free: writes may soon fail; once low, until",
    "  more than `DISK_LOW_MB` plus 10 % is free). The 503 carries the same disk figures in `error.details`",
    "  when they can be read (a full disk is a likely cause).",
    "",
    "## Firmware releases",
    "",
    "A release is a version (semver) plus one UF2 per board. The server imports the read-only bundle",
    "in `FIRMWARE_DIR` (`<version>/<board>.uf2`, e.g. `1.0.0/pico_w.uf2`; unset means none) into",
    "`DATA_DIR/firmware/` at every start, and admins can add their own builds with `uploadFirmware`.",
    "Each file is checked: UF2 framing (512-byte blocks, magic numbers), the board's family id",
    "(`0xe48bff56` for `pico_w`, `0xe48bff59` for `pico2_w`) and every address below the config sector.",
    "A bad bundled file is refused with one log line naming it; the server starts anyway. Nothing is",
    "fetched from the internet. Releases never change once stored: the same bytes again are a no-op,",
    "different bytes for a stored version and board answer 409 `firmware_exists`. A device's",
    "`firmwareUpdate` is the newest release's version when it is newer than the device's `firmwareVersion`.",
    "",
    "## Deployments",
    "",
    "- `createDeployment` loads the bundle in a sandbox (the trial; its top level has",
    "  `SCRIPT_LOAD_TIMEOUT_MS`, default 250 ms), runs `onDeviceConnect` for the connected devices, and",
    "  only then makes it live. A bundle that does not load, or whose scripts stop themselves while",
    '  starting (memory cap, stack overflow), is answered 201 with `status: "failed"` and the reason in',
    "  `error`; the previous version goes on running. No deployment stays `pending`: one cut off by a",
    "  server stop or crash is `failed` when the server starts again.",
    "- **Failed deploys pause.** After 3 failed deploys of a project in a row, the next deploy of that",
    "  project is refused with 429 `deploys_throttled` and a `Retry-After` header for 10 s; each further",
    "  failure doubles the pause, up to 5 minutes. A deploy that goes live resets the count. Other",
    "  projects are not affected; the count is kept in memory (a server restart clears it).",
    "- **Retention.** Each project keeps its newest `DEPLOYMENTS_KEPT` deployments (default 20, shown",
    "  as `deploymentsKept` by `serverInfo`); older ones are removed with their files after each",
    "  deploy. The live deployment is never removed, however old.",
    "- `getDeploymentSource` returns the source files with their text from the source map uploaded",
    "  with the bundle (`sourcesContent`), without the `@sdk/device` library; `downloadDeploymentBundle`",
    "  returns the bundle exactly as deployed. Both answer 404 for a project you may not see.",
    "",
    "## Device tags",
    "",
    "Devices carry tags to act on groups of them. A tag is 1–32 characters: lowercase letters, digits,",
    "`-` and `_`, starting with a letter or digit (`kitchen`, `floor-2`, `batch_2026`); a device has at",
    "most 16 (`tagPattern` and `tagLimits` in `packages/protocol/src/tags.ts`). Tags are stored sorted,",
    "without duplicates, and every device body has `tags`. A bad tag, or a 17th, is 400",
    "`invalid_request` naming the field; nothing changes.",
    "",
    "- `setDeviceTags` (PUT) replaces a device's tags, `addDeviceTags` (POST) adds some, `removeDeviceTag`",
    "  (DELETE `.../tags/:tag`) removes one (a tag it lacks is no error). Each answers the device.",
    "- `listDevices?tag=kitchen` lists only the devices with that tag.",
    "- `sendTagCommand` (POST `/v1/projects/:projectId/commands`, `{tag, type, args, timeoutSeconds}`)",
    "  sends one command to every device with the tag, through the same path as `sendDeviceCommand`",
    "  (the arguments are checked against each board first: a bad one is 400 before any device gets it).",
    "  8 devices at a time; each command has the device's own timeout (`DEVICE_COMMAND_TIMEOUT_SECONDS`),",
    "  and the whole has an overall timeout (`timeoutSeconds`, default 30, at most 120). The answer has",
    "  one entry per device with the tag: `{ok: true, deviceId, name, value}` or `{ok: false, deviceId,",
    "  name, error: {code, message}}` — `device_offline` for a device not connected, `device_timeout` for",
    "  one without an answer in time (or not reached before the overall timeout), `device_error`,",
    "  `invalid_argument`. The request itself succeeds (200) however many devices failed.",
    "- `sendTagMessage` (POST `/v1/projects/:projectId/messages`, `{tag, message}`) delivers the message",
    "  to the script of every device with the tag (its `onMessage`), as `sendDeviceMessage` does, with",
    "  the same per-device answers (`device_offline`, `no_script`).",
    "- From the CLI: `sdk devices command --tag TAG TYPE --args JSON` and `sdk devices message --tag TAG",
    "  JSON` (or `--device DEVICE`) print one line per device and exit with 1 when any failed.",
    "- `createDevices` (POST `/v1/projects/:projectId/devices/bulk`, `{devices: [{name, board, tags}]}`,",
    "  at most 500) provisions many boards at once: every row is checked first and if any is wrong none",
    "  is added (400 `invalid_request` whose `fields` name each bad row, e.g. `devices.3.board`). The",
    "  answer has each device with its credentials, in the order given; the secrets are shown only this",
    "  once (`sdk devices create --from FILE` writes them to a 0600 file).",
    "- The project watch socket takes `?tags=` and sends `device_tags` events",
    "  ([project watch](protocol.md#project-watch)).",
    "",
    ...alertsSection,
    "## WebSockets",
    "",
    "Live data comes over WebSockets on the same port, specified in [protocol.md](protocol.md):",
    "",
    "- `/v1/projects/:projectId/devices/:deviceId/watch`: one device's status, log, state and pins",
    "  events after a snapshot ([the watch protocol](protocol.md#watch-protocol)).",
    "- `/v1/projects/:projectId/watch`: the same for every device of a project, devices created",
    "  later included, with optional `devices`, `events` and `tags` filters ([project watch](protocol.md#project-watch)).",
    "",
    "## Removed and moved",
    "",
    "- `GET /logs/stream` answers 410 `gone`: use the watch WebSocket",
    "  `/v1/projects/:projectId/devices/:deviceId/watch`.",
    "- `GET /changelog` answers 301 to `/docs/changelog`.",
    "",
    "## Endpoints",
    "",
    "| method | path | access | summary |",
    "| --- | --- | --- | --- |",
    ...(Object.entries(endpoints) as [string, Endpoint][]).map(
      ([name, e]) =>
        `| ${e.method} | [\`${e.path}\`](#${name.toLowerCase()}) | ${accessText[e.access]} | ${e.summary} |`,
    ),
    "",
  ];
  for (const [name, e] of Object.entries(endpoints) as [string, Endpoint][]) {
    lines.push(
      `### ${name}`,
      "",
      `\`${e.method} ${e.path}\` — ${accessText[e.access]}, answers ${e.status ?? 200}.`,
      "",
    );
    lines.push(`${e.summary}.`, "");
    if (e.query) lines.push("Query:", "", ...fieldTable(e.query, "input"), "");
    if (e.binary === "body") {
      lines.push(
        `Body: the raw file, \`Content-Type: application/octet-stream\`, at most ${(e.bodyLimit ?? 1024 * 1024) / 1024 / 1024} MiB.`,
        "",
      );
    } else if (e.body) lines.push("Body:", "", ...fieldTable(e.body, "input"), "");
    if (e.binary === "result") {
      lines.push(
        "Result: the file itself, `Content-Type: application/octet-stream`, without the success envelope (errors keep the error envelope).",
        "",
      );
    } else lines.push("Result:", "", ...fieldTable(e.result, "output"), "");
  }
  return lines.join("\n");
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  fs.writeFileSync(new URL("errors.md", docsDirUrl), renderErrorDocs());
  fs.writeFileSync(new URL("api.md", docsDirUrl), renderApiDocs());
  console.log("wrote docs/errors.md and docs/api.md");
}
