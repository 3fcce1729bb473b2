import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { sdk, tempDir } from "./helpers.ts";

// What the CLI prints when a directory is not a project: each message says once what is wrong and
// what to do, and never nests one bracket inside another.

/** The deepest nesting of (), [] and {} in a text. */
function bracketDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  for (const c of text) {
    if ("([{".includes(c)) deepest = Math.max(deepest, ++depth);
    if (")]}".includes(c)) depth--;
  }
  return deepest;
}

function assertReadable(stderr: string, what: string) {
  assert.ok(bracketDepth(stderr) <= 1, `${what}: nested brackets in ${JSON.stringify(stderr)}`);
  assert.ok((stderr.match(/sdk init/g) ?? []).length <= 1, `${what}: says "sdk init" twice: ${stderr}`);
  assert.ok((stderr.match(/error:/g) ?? []).length <= 1, `${what}: says "error:" twice: ${stderr}`);
}

test("outside a project every command says once that sdk.ts is missing and what to do", async (t) => {
  const home = tempDir(t, "sdk-msg-home-");
  const work = tempDir(t, "sdk-msg-work-");
  // A token and host: commands get as far as reading sdk.ts without asking any server.
  const env = { SDK_TOKEN: "sdk_test", SDK_HOST: "http://127.0.0.1:9" };
  const build = await sdk(t, ["build"], { home, cwd: work, env });
  assert.equal(build.code, 1);
  assert.match(
    build.stderr,
    /^sdk\.ts:1:1 - error: no sdk\.ts in this directory; run `sdk init` to make a project here$/m,
  );
  assertReadable(build.stderr, "build");
  for (const args of [["env", "list"], ["logs"], ["status"], ["deploy"]]) {
    const r = await sdk(t, args, { home, cwd: work, env });
    assert.equal(r.code, 1, `${args.join(" ")}: ${r.stderr}`);
    assert.equal(
      r.stderr,
      `error: No sdk.ts in ${work}: run sdk init to make a project here, or pass --project prj_…\n`,
      args.join(" "),
    );
    assertReadable(r.stderr, args.join(" "));
  }
  const dev = await sdk(t, ["dev"], { home, cwd: work, env });
  assert.equal(dev.code, 1);
  assert.match(
    dev.stderr,
    /^error: No sdk\.ts in \S+: run sdk init to make a project here, or run sdk dev in a project directory\n$/,
  );

  fs.writeFileSync(path.join(work, "sdk.ts"), "export default {");
  const broken = await sdk(t, ["env", "list"], { home, cwd: work, env });
  assert.equal(broken.code, 1);
  assert.match(broken.stderr, /^error: sdk\.ts:\d+:\d+: .+\nFix sdk\.ts, or pass --project prj_…\n$/);
  assertReadable(broken.stderr, "env list with a broken sdk.ts");
});
