// Keeps docs/protocol.md and the protocol schemas in agreement: every message type has a heading
// and an example, every close and error code is mentioned, and every annotated JSON example
// validates against the schema it claims to show.
import assert from "node:assert/strict";
import fs from "node:fs";
import { test } from "node:test";
import { docsDirUrl, headingSlug } from "@sdk/docs";
import type { z } from "zod";
import {
  allDeviceMessageTypes,
  boards,
  type CommandType,
  commandResults,
  commandSchemas,
  commandTypes,
  customTypePattern,
  deviceCloseCodes,
  deviceErrorCodes,
  deviceMessageSchemas,
  deviceSocketPath,
  ErrorEnvelope,
  isSimulatorCommand,
  maxBytesPerMessage,
  maxFrameBytes,
  ProjectWatchEvent,
  projectWatchPath,
  protocolVersion,
  ServerError,
  simulatorCommandSchemas,
  uartBauds,
  WatchEvent,
  Welcome,
  watchCloseCodes,
  watchPath,
  watchSubprotocol,
} from "../src/index.ts";

const docPath = new URL("protocol.md", docsDirUrl);
const doc = fs.readFileSync(docPath, "utf8");
const lines = doc.split("\n");

const watchEventTypes = WatchEvent.options.map((o) => o.shape.type.value);
const serverErrorCodes = ServerError.shape.code.options;

type Json = Record<string, unknown>;

interface Example {
  /** 1-based line of the opening fence. */
  line: number;
  text: string;
  value: unknown;
  /** The `<!-- example: … -->` annotation right above the block, if any. */
  annotation: string | undefined;
  /** The nearest `###` heading above the block. */
  heading: string | undefined;
}

/** Every ```json block, with its annotation and the heading it sits under. */
function jsonBlocks(): Example[] {
  const blocks: Example[] = [];
  let heading: string | undefined;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (/^#{1,3} /.test(line)) heading = /^### /.test(line) ? line : undefined;
    if (line.trim() !== "```json") continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && lines[i]!.trim() !== "```"; i++) body.push(lines[i]!);
    assert.ok(i < lines.length, `line ${start + 1}: unterminated json block`);
    let above = start - 1;
    while (above >= 0 && lines[above]!.trim() === "") above--;
    const match = above >= 0 ? /^<!--\s*example:\s*(.+?)\s*-->$/.exec(lines[above]!.trim()) : null;
    const text = body.join("\n");
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      assert.fail(`line ${start + 1}: the json block does not parse: ${(error as Error).message}`);
    }
    blocks.push({ line: start + 1, text, value, annotation: match?.[1], heading });
  }
  return blocks;
}

const blocks = jsonBlocks();

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

function hasHeading(type: string): boolean {
  return new RegExp(`^### \`${escapeRegExp(type)}\`(\\s|$)`, "m").test(doc);
}

function hasExample(type: string): boolean {
  const pattern = new RegExp(`"type":\\s?"${escapeRegExp(type)}"`);
  return blocks.some((b) => pattern.test(b.text));
}

/** Fails with the schema's own words, and the line of the example. */
function assertValid(schema: z.ZodType, value: unknown, where: string): void {
  const result = schema.safeParse(value);
  assert.ok(
    result.success,
    `${where}: ${result.success ? "" : result.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`,
  );
}

/** Top-level keys the schema does not know: a typo in the doc would otherwise be stripped silently. */
function assertKnownKeys(schema: z.ZodObject, value: Json, where: string, ignore: string[] = []): void {
  const known = new Set([...Object.keys(schema.shape), ...ignore]);
  const unknown = Object.keys(value).filter((k) => !known.has(k));
  assert.deepEqual(unknown, [], `${where}: fields the schema does not define`);
}

function assertCommandId(id: unknown, where: string): void {
  assert.ok(
    typeof id === "number" && Number.isInteger(id) && id >= 1 && id <= 2 ** 31 - 1,
    `${where}: id must be a positive integer (got ${JSON.stringify(id)})`,
  );
}

const isCommand = (name: string): name is CommandType => Object.hasOwn(commandSchemas, name);
const isDeviceMessage = (name: string): name is keyof typeof deviceMessageSchemas =>
  Object.hasOwn(deviceMessageSchemas, name);

test("the doc states the protocol version, the socket paths and the frame limit", () => {
  assert.match(doc, new RegExp(`^\\*\\*Protocol version: ${protocolVersion}\\*\\*`, "m"));
  assert.ok(doc.includes(`\`${deviceSocketPath}\``), deviceSocketPath);
  assert.ok(doc.includes(watchPath), watchPath);
  assert.ok(doc.includes(projectWatchPath), projectWatchPath);
  assert.ok(doc.includes(`"${watchSubprotocol}"`), watchSubprotocol);
  assert.ok(doc.includes(String(maxFrameBytes)), `maxFrameBytes (${maxFrameBytes})`);
  assert.ok(doc.includes(String(maxFrameBytes - 1)), `the largest frame (${maxFrameBytes - 1})`);
  assert.ok(doc.includes(String(maxBytesPerMessage)), `maxBytesPerMessage (${maxBytesPerMessage})`);
  assert.ok(doc.includes(uartBauds.join(", ")), "the UART baud rates");
});

test("every device message type has a heading and an example", () => {
  for (const type of allDeviceMessageTypes) {
    assert.ok(hasHeading(type), `no "### \`${type}\`" heading`);
    assert.ok(hasExample(type), `no json example with "type": "${type}"`);
  }
});

test("every watch event type has a heading and an example", () => {
  for (const type of watchEventTypes) {
    assert.ok(hasHeading(type), `no "### \`${type}\`" heading`);
    assert.ok(
      blocks.some((b) => b.annotation === `watch ${type}`),
      `no json example annotated "watch ${type}"`,
    );
  }
});

test("every close code and error code is mentioned", () => {
  for (const [name, code] of Object.entries(deviceCloseCodes)) {
    assert.match(doc, new RegExp(`\\| ${code} \\| \`${name}\` \\|`), `device close code ${code} (${name})`);
  }
  for (const [name, code] of Object.entries(watchCloseCodes)) {
    assert.match(doc, new RegExp(`\\| ${code} \\| \`${name}\` \\|`), `watch close code ${code} (${name})`);
  }
  for (const code of Object.keys(deviceErrorCodes)) {
    assert.ok(doc.includes(`\`${code}\``), `device error code ${code}`);
  }
  for (const code of serverErrorCodes) {
    assert.match(doc, new RegExp(`^\\| \`${code}\` \\|`, "m"), `server error code ${code} in a table`);
  }
});

test("the pin tables match the boards", () => {
  const gp = (pins: readonly number[]) => pins.map((p) => `GP${p}`).join(", ");
  for (const info of Object.values(boards)) {
    assert.ok(doc.includes(`| ${info.name} | ${info.chip} |`), info.name);
    assert.ok(doc.includes(`| header GPIOs | ${gp(info.gpios)} |`), `${info.name}: header GPIOs`);
    assert.ok(doc.includes(`| ADC inputs | ${gp(info.adcPins)} |`), `${info.name}: ADC pins`);
    const buses = { I2C: info.i2c, SPI: info.spi, UART: info.uart };
    for (const [kind, byIndex] of Object.entries(buses)) {
      for (const [index, roles] of Object.entries(byIndex)) {
        for (const [role, pins] of Object.entries(roles as Record<string, readonly number[]>)) {
          const row = `| ${kind}${index} | \`${role}\` | ${gp(pins)} |`;
          assert.ok(doc.includes(row), `${info.name}: missing row ${row}`);
        }
      }
    }
  }
  for (const board of Object.keys(boards)) assert.ok(doc.includes(`\`${board}\``), board);
});

test("every project watch event type has an example", () => {
  for (const option of ProjectWatchEvent.options) {
    const type = option.shape.type.value;
    assert.ok(
      blocks.some((b) => b.annotation === `project-watch ${type}`),
      `no json example annotated "project-watch ${type}"`,
    );
  }
});

test("every json example validates against its schema", () => {
  const commandIds = new Map<string, number>();
  for (const block of blocks) {
    const where = `docs/protocol.md line ${block.line}`;
    if (!isObject(block.value) || !("type" in block.value)) {
      if (block.annotation === "http-error") assertValid(ErrorEnvelope, block.value, where);
      else assert.equal(block.annotation, undefined, `${where}: annotated, but has no "type"`);
      continue;
    }
    const value = block.value;
    const type = value.type;
    assert.equal(typeof type, "string", `${where}: "type" must be a string`);
    assert.ok(block.annotation, `${where}: a json example with a "type" needs <!-- example: … --> above it`);
    const [kind, name = ""] = block.annotation.split(/\s+/);
    switch (kind) {
      case "command": {
        assert.ok(isCommand(name), `${where}: ${name} is not a command`);
        assert.equal(type, name, `${where}: the example's type`);
        assert.ok(block.heading?.includes(`\`${name}\``), `${where}: not under the ${name} heading`);
        const { type: _, id, ...args } = value;
        assertCommandId(id, where);
        assertValid(commandSchemas[name], args, where);
        assertKnownKeys(commandSchemas[name], args, where);
        commandIds.set(name, id as number);
        break;
      }
      case "result": {
        assert.ok(isCommand(name), `${where}: ${name} is not a command`);
        assert.equal(type, "result", `${where}: a result example must have "type": "result"`);
        assert.ok(block.heading?.includes(`\`${name}\``), `${where}: not under the ${name} heading`);
        assertValid(deviceMessageSchemas.result, value, where);
        assertKnownKeys(deviceMessageSchemas.result, value, where);
        assertValid(commandResults[name], value.value ?? null, `${where} (the ${name} result)`);
        assert.equal(
          value.id,
          commandIds.get(name),
          `${where}: the result's id must match the command example's`,
        );
        break;
      }
      case "device": {
        assert.ok(isDeviceMessage(name), `${where}: ${name} is not a device message type`);
        assert.equal(type, name, `${where}: the example's type`);
        assertValid(deviceMessageSchemas[name], value, where);
        assertKnownKeys(deviceMessageSchemas[name], value, where);
        break;
      }
      case "custom": {
        assert.match(String(type), customTypePattern, `${where}: a custom type must be lower_snake_case`);
        assert.ok(
          !(allDeviceMessageTypes as readonly string[]).includes(String(type)),
          `${where}: ${String(type)} is reserved`,
        );
        break;
      }
      case "simulator": {
        assert.ok(isSimulatorCommand(name), `${where}: ${name} is not a simulator-only command`);
        assert.equal(type, name, `${where}: the example's type`);
        const { type: _, id, ...args } = value;
        assertCommandId(id, where);
        assertValid(simulatorCommandSchemas[name], args, where);
        assertKnownKeys(simulatorCommandSchemas[name], args, where);
        break;
      }
      case "welcome":
        assertValid(Welcome, value, where);
        assertKnownKeys(Welcome, value, where);
        break;
      case "server-error":
        assertValid(ServerError, value, where);
        assertKnownKeys(ServerError, value, where);
        break;
      case "watch": {
        assert.equal(type, name, `${where}: the example's type`);
        assertValid(WatchEvent, value, where);
        const option = WatchEvent.options.find((o) => o.shape.type.value === name);
        assert.ok(option, `${where}: ${name} is not a watch event`);
        assertKnownKeys(option, value, where);
        break;
      }
      case "project-watch": {
        assert.equal(type, name, `${where}: the example's type`);
        assertValid(ProjectWatchEvent, value, where);
        const option = ProjectWatchEvent.options.find((o) => o.shape.type.value === name);
        assert.ok(option, `${where}: ${name} is not a project watch event`);
        assertKnownKeys(option, value, where);
        break;
      }
      default:
        assert.fail(`${where}: unknown annotation "${block.annotation}"`);
    }
  }
});

test("every command, device message and server error code has an annotated example", () => {
  const annotations = new Set(blocks.map((b) => b.annotation));
  for (const type of commandTypes) {
    assert.ok(annotations.has(`command ${type}`), `no command example for ${type}`);
    assert.ok(annotations.has(`result ${type}`), `no result example for ${type}`);
  }
  for (const type of Object.keys(deviceMessageSchemas)) {
    assert.ok(annotations.has(`device ${type}`), `no device example for ${type}`);
  }
  for (const name of ["welcome", "custom", "http-error"]) {
    assert.ok(annotations.has(name), `no ${name} example`);
  }
  for (const code of serverErrorCodes) {
    assert.ok(
      blocks.some((b) => b.annotation === "server-error" && isObject(b.value) && b.value.code === code),
      `no server-error example with code ${code}`,
    );
  }
});

test("links within the doc point at headings that exist", () => {
  // The anchors the server's /docs/:page renderer gives headings.
  const slug = headingSlug;
  const anchors = new Set(
    lines.filter((l) => /^#{1,6} /.test(l)).map((l) => slug(l.replace(/^#{1,6} /, ""))),
  );
  const links = [...doc.matchAll(/\]\(#([^)]+)\)/g)].map((m) => m[1]!);
  assert.ok(links.length > 0);
  for (const link of links) assert.ok(anchors.has(link), `no heading for the link #${link}`);
});
