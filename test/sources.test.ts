// The source scanner behind the repository checks: what counts as an import.
import assert from "node:assert/strict";
import { test } from "node:test";
import { importsOf, packageOf, relativeUrlsOf, resolveFrom } from "../scripts/checks/sources.ts";

const specifiers = (text: string) => importsOf(text).map((i) => `${i.kind} ${i.specifier}`);

test("import and export statements of every form, with their lines", () => {
  const text = [
    'import fs from "node:fs";',
    'import type { A } from "@sdk/protocol";',
    "import {",
    "  b,",
    "  type C,",
    '} from "./b.ts";',
    'import "./side-effect.ts";',
    'export * from "@sdk/client";',
    'export { d } from "../d.ts";',
    'const e = await import("@sdk/build");',
    'type F = typeof import("zod");',
    'const g = import.meta.resolve("@sdk/server/main");',
  ].join("\n");
  assert.deepEqual(specifiers(text), [
    "static node:fs",
    "static @sdk/protocol",
    "static ./b.ts",
    "static ./side-effect.ts",
    "static @sdk/client",
    "static ../d.ts",
    "dynamic @sdk/build",
    "dynamic zod",
    "resolve @sdk/server/main",
  ]);
  assert.deepEqual(
    importsOf(text).map((i) => i.line),
    [1, 2, 3, 7, 8, 9, 10, 11, 12],
  );
});

test("code shown in comments, template literals and regular expressions is not an import", () => {
  const text = [
    '// import a from "in-a-line-comment";',
    '/** import b from "in-a-doc-comment"; */',
    'const script = `import { DeviceScript } from "@sdk/device";',
    // biome-ignore lint/suspicious/noTemplateCurlyInString: source text under test
    '  ${`import x from "nested-template"`} import y from "after-expression";`;',
    'const re = /import z from "regex"/;',
    'const ok = "it\'s"; import real from "real";',
  ].join("\n");
  assert.deepEqual(specifiers(text), ["static real"]);
});

test("an apostrophe in JSX text does not hide the imports after it", () => {
  const text = ["const p = <p>Don't panic</p>;", 'import later from "later";'].join("\n");
  assert.deepEqual(specifiers(text), ["static later"]);
});

test("relative URLs, package names and resolved paths", () => {
  assert.deepEqual(relativeUrlsOf('const d = new URL("../../docs/", import.meta.url);'), [
    { specifier: "../../docs/", line: 1 },
  ]);
  assert.equal(packageOf("@sdk/client/credentials"), "@sdk/client");
  assert.equal(packageOf("ws"), "ws");
  assert.equal(packageOf("quickjs-emscripten-core/x"), "quickjs-emscripten-core");
  assert.equal(
    resolveFrom("packages/server/src/http/routes/x.ts", "../../db/y.ts"),
    "packages/server/src/db/y.ts",
  );
  assert.equal(resolveFrom("packages/server/test/x.ts", "../../../"), "");
});
