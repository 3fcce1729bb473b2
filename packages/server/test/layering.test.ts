import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

// The layering rules of DESIGN.md §2, checked on the source text.
const root = fileURLToPath(new URL("../../../", import.meta.url));

function sourceFiles(dir: string): string[] {
  const abs = path.join(root, dir);
  if (!fs.existsSync(abs)) return [];
  return (fs.readdirSync(abs, { recursive: true }) as string[])
    .filter((f) => /\.tsx?$/.test(f) && !f.includes("node_modules"))
    .map((f) => path.join(dir, f));
}

function imports(file: string): string[] {
  const text = fs.readFileSync(path.join(root, file), "utf8");
  // Statements at the start of a line only: examples inside doc comments are not imports.
  const statements = /^(?:import|export)\s[^;]*?from\s+["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/gm;
  return [...text.matchAll(statements)].map((m) => (m[1] ?? m[2])!);
}

/** Resolves a relative import to a repo path, so "../repositories/x.ts" is seen for what it is. */
function resolved(file: string, spec: string): string {
  return spec.startsWith(".") ? path.join(path.dirname(file), spec) : spec;
}

function violations(files: string[], bad: (target: string) => boolean): string[] {
  return files.flatMap((f) =>
    imports(f)
      .filter((s) => bad(resolved(f, s)))
      .map((s) => `${f} imports ${s}`),
  );
}

test("only the server's config module reads process.env", () => {
  const offenders = sourceFiles("packages/server/src")
    .filter((f) => !f.endsWith("config.ts"))
    .filter((f) => /process\.env/.test(fs.readFileSync(path.join(root, f), "utf8")));
  assert.deepEqual(offenders, []);
});

test("routes and sockets go through services: they never import repositories or the database", () => {
  const files = [...sourceFiles("packages/server/src/http"), ...sourceFiles("packages/server/src/ws")];
  assert.ok(files.length > 0);
  assert.deepEqual(
    violations(files, (t) => /packages\/server\/src\/(repositories|db)\//.test(t)),
    [],
  );
});

test("services do not reach up into routes or sockets; repositories hold SQL and nothing above", () => {
  assert.deepEqual(
    violations(sourceFiles("packages/server/src/services"), (t) =>
      /packages\/server\/src\/(http|ws)\//.test(t),
    ),
    [],
  );
  assert.deepEqual(
    violations(sourceFiles("packages/server/src/repositories"), (t) =>
      /packages\/server\/src\/(http|ws|services)\//.test(t),
    ),
    [],
  );
});

test("protocol imports nothing of ours; client imports only protocol; device imports only protocol", () => {
  const ours = (t: string) => t.startsWith("@sdk/") || t.startsWith("packages/");
  const outside = (pkg: string) => (t: string) =>
    (t.startsWith("packages/") && !t.startsWith(`packages/${pkg}/`)) || t.startsWith("@sdk/");
  assert.deepEqual(
    violations(sourceFiles("packages/protocol/src"), (t) => ours(t) && outside("protocol")(t)),
    [],
  );
  for (const pkg of ["client", "device"]) {
    assert.deepEqual(
      violations(
        sourceFiles(`packages/${pkg}/src`),
        (t) => outside(pkg)(t) && !/^@sdk\/protocol(\/|$)/.test(t),
      ),
      [],
      pkg,
    );
  }
});

test("cli, mcp and dashboard talk to the server only through @sdk/client", () => {
  for (const pkg of ["cli", "mcp", "dashboard"]) {
    assert.deepEqual(
      violations(
        sourceFiles(`packages/${pkg}/src`),
        (t) => t.startsWith("@sdk/server") || t.includes("packages/server/"),
      ),
      [],
      pkg,
    );
  }
});

test("the checker itself sees a violation when there is one", () => {
  assert.deepEqual(
    violations(["packages/server/test/layering.test.ts"], (t) => t === "node:fs"),
    ["packages/server/test/layering.test.ts imports node:fs"],
  );
  assert.equal(
    resolved("packages/server/src/http/routes/x.ts", "../../repositories/y.ts"),
    "packages/server/src/repositories/y.ts",
  );
});
