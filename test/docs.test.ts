// docs/errors.md and docs/api.md are generated from @sdk/protocol by scripts/generate-docs.ts; they
// must be committed as the generator writes them today.
import assert from "node:assert/strict";
import fs from "node:fs";
import { test } from "node:test";
import { docsDirUrl } from "@sdk/docs";
import { type Endpoint, endpoints, errorCodes } from "@sdk/protocol";
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
