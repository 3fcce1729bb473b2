// Every import is declared by the importing package, and no file reaches into another
// package by a relative path (scripts/checks/imports.ts).
import assert from "node:assert/strict";
import { test } from "node:test";
import { ships, undeclaredImports } from "../scripts/checks/imports.ts";
import { workspaces } from "../scripts/checks/sources.ts";

test("every package declares what its files import", () => {
  assert.deepEqual(undeclaredImports(), []);
});

test("what ships is src/, bin/ and the files package.json exports", () => {
  const ws = (name: string) => workspaces().find((w) => w.manifest.name === name)!;
  assert.equal(ships("packages/cli/src/main.ts", ws("@sdk/cli")), true);
  assert.equal(ships("packages/cli/bin/sdk.mjs", ws("@sdk/cli")), true);
  assert.equal(ships("packages/cli/test/cli.test.ts", ws("@sdk/cli")), false);
  assert.equal(ships("packages/dashboard/built.ts", ws("@sdk/dashboard")), true);
  assert.equal(ships("packages/dashboard/vite.config.ts", ws("@sdk/dashboard")), false);
  assert.equal(ships("scripts/generate-docs.ts", ws("sdk")), false);
});
