// docs/errors.md and docs/api.md are generated from @sdk/protocol by scripts/generate-docs.ts; they
// must be committed as the generator writes them today. README's configuration table must list every
// environment variable packages/server/src/config.ts reads, with its default.
import assert from "node:assert/strict";
import fs from "node:fs";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { docsDirUrl } from "@sdk/docs";
import { type Endpoint, endpoints, errorCodes } from "@sdk/protocol";
import { loadConfig } from "@sdk/server/config";
import { renderApiDocs, renderErrorDocs } from "../scripts/generate-docs.ts";

test("docs/errors.md documents every error code (regenerate with node scripts/generate-docs.ts)", () => {
  const file = fs.readFileSync(new URL("errors.md", docsDirUrl), "utf8");
  for (const code of errorCodes) assert.match(file, new RegExp(`^## ${code}$`, "m"), code);
  assert.equal(file, renderErrorDocs(), "docs/errors.md is out of date with the catalog");
});

test("docs/api.md lists every endpoint of the table (regenerate with node scripts/generate-docs.ts)", () => {
  const file = fs.readFileSync(new URL("api.md", docsDirUrl), "utf8");
  for (const [name, spec] of Object.entries(endpoints) as [string, Endpoint][]) {
    assert.ok(file.includes(`\`${spec.method} ${spec.path}\``), name);
  }
  assert.equal(file, renderApiDocs(), "docs/api.md is out of date with the endpoint table");
});

/** The rows of README's "## Configuration" table: variable → its Default cell. */
function readmeConfigRows(): Map<string, string> {
  const readme = fs.readFileSync(new URL("../README.md", import.meta.url), "utf8");
  const section = readme.split(/^## Configuration$/m)[1]?.split(/^## /m)[0];
  assert.ok(section, 'README.md has no "## Configuration" section');
  const rows = new Map<string, string>();
  for (const match of section.matchAll(/^\| `([A-Z][A-Z0-9_]*)` +\| ([^|]*?) +\|/gm)) {
    rows.set(match[1] as string, match[2] as string);
  }
  return rows;
}

/**
 * Every variable the server's configuration reads (recorded by running loadConfig on an
 * environment that notes each name asked for), with the literal default config.ts gives it.
 */
function configVariables(): Map<string, string | undefined> {
  const read = new Set<string>();
  // Once with nothing set, once with the variables that switch a part on (and so read its own).
  for (const given of [
    {},
    { MQTT_URL: "mqtt://127.0.0.1:1883" },
    { NATS_URL: "nats://127.0.0.1:4222", DATABASE_URL: "postgres://127.0.0.1/sdk" },
  ] as Record<string, string>[]) {
    const env = new Proxy({} as Record<string, string | undefined>, {
      get: (_target, name) => {
        if (typeof name !== "string") return undefined;
        read.add(name);
        return given[name];
      },
    });
    loadConfig(env, "/", false, "host");
  }
  const source = fs.readFileSync(fileURLToPath(import.meta.resolve("@sdk/server/config")), "utf8");
  const defaults = new Map<string, string>();
  // integer(env, "PORT", 8080, …), boolean(env, "MDNS", true), oneOf(env, "LOG_LEVEL", "info", …)
  for (const match of source.matchAll(
    /\(\s*env,\s*"([A-Z][A-Z0-9_]*)",\s*(?:"(\w+)"|([\d_]+|true|false))[,)]/g,
  )) {
    defaults.set(match[1] as string, (match[2] ?? match[3]!).replaceAll("_", ""));
  }
  return new Map([...read].map((name) => [name, defaults.get(name)]));
}

test("README's configuration table documents every variable config.ts reads, with its default", () => {
  const rows = readmeConfigRows();
  const variables = configVariables();
  for (const known of ["PORT", "DATA_DIR", "SIGN_IN_LINK_KEY", "SCRIPT_TIMEOUT_MS"]) {
    assert.ok(variables.has(known), `loadConfig no longer reads ${known}? fix configVariables()`);
  }
  for (const [name, fallback] of variables) {
    const cell = rows.get(name);
    assert.ok(
      cell !== undefined,
      `packages/server/src/config.ts reads ${name}, but README.md's "## Configuration" table has no row for it: add one (name, default, meaning)`,
    );
    if (fallback !== undefined) {
      assert.ok(
        cell.startsWith(`\`${fallback}\``),
        `README.md gives ${name} the default "${cell}"; config.ts says ${fallback}`,
      );
    }
  }
  for (const name of rows.keys()) {
    assert.ok(
      variables.has(name),
      `README.md's configuration table lists ${name}, which config.ts no longer reads`,
    );
  }
});
