import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const exec = promisify(execFile);
const sandboxDir = fileURLToPath(new URL("..", import.meta.url));

// The server's scripts worker imports only the sandbox: every module it loads is started up in
// the worker's own isolate (types stripped again, code compiled again) and stays in its memory.
// The protocol's schemas (zod and every message type) are the server's business, not the worker's.
test("the sandbox loads without the protocol's schemas", async () => {
  const script = `
    import { registerHooks } from "node:module";
    const loaded = [];
    registerHooks({ load(url, context, next) { loaded.push(url); return next(url, context); } });
    await import("@sdk/sandbox");
    console.log(JSON.stringify(loaded));
  `;
  const { stdout } = await exec(process.execPath, ["--input-type=module", "-e", script], { cwd: sandboxDir });
  const loaded = JSON.parse(stdout) as string[];
  assert.ok(
    loaded.some((url) => url.includes("/sandbox/src/")),
    `the sandbox itself is among them: ${stdout}`,
  );
  const heavy = loaded.filter((url) => /\/node_modules\/zod\/|\/protocol\/src\/index\.ts$/.test(url));
  assert.deepEqual(heavy, [], "importing @sdk/sandbox loads no zod and not @sdk/protocol's index");
  assert.ok(loaded.length < 60, `${loaded.length} modules (27 when this test was written)`);
});
