import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { type TestContext, test } from "node:test";
import { within } from "@sdk/test-helpers";
import { watchTree } from "../src/watch-tree.ts";
import { gnuSed, tempDir } from "./helpers.ts";

/** A watch whose batches can be awaited one by one. */
function watched(t: TestContext, dir: string) {
  const batches: string[][] = [];
  let wake = () => {};
  const watch = watchTree(dir, (files) => {
    batches.push(files);
    wake();
  });
  t.after(() => watch.close());
  const next = (what: string) =>
    within(
      new Promise<string[]>((resolve) => {
        const check = () => (batches.length ? resolve(batches.shift()!) : undefined);
        wake = check;
        check();
      }),
      10_000,
      `a change batch after ${what}`,
    );
  return { next };
}

const renameOver = (file: string, text: string) => {
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.swp`);
  fs.writeFileSync(tmp, text);
  fs.renameSync(tmp, file);
};

test("watchTree sees every save of a file saved by rename-over, by sed -i and in place", async (t) => {
  const dir = tempDir(t, "sdk-watch-");
  const file = path.join(dir, "src", "index.ts");
  fs.mkdirSync(path.dirname(file));
  fs.writeFileSync(file, "v0");
  const w = watched(t, dir);
  for (let i = 1; i <= 3; i++) {
    renameOver(file, `v${i}`);
    assert.deepEqual(await w.next(`rename-over save ${i}`), [path.join("src", "index.ts")]);
  }
  for (let i = 1; i <= 2 && gnuSed(t); i++) {
    execFileSync("sed", ["-i", "-e", `s/^.*$/sed${i}/`, file]);
    assert.equal(fs.readFileSync(file, "utf8").trim(), `sed${i}`);
    assert.deepEqual(await w.next(`sed -i ${i}`), [path.join("src", "index.ts")]);
  }
  fs.writeFileSync(file, "in place");
  assert.deepEqual(await w.next("a write in place"), [path.join("src", "index.ts")]);
});

test("watchTree follows new directories and ignores .sdk, node_modules and .git", async (t) => {
  const dir = tempDir(t, "sdk-watch-");
  for (const d of [".sdk/build", "node_modules/x", ".git"])
    fs.mkdirSync(path.join(dir, d), { recursive: true });
  const w = watched(t, dir);
  fs.mkdirSync(path.join(dir, "src", "lib"), { recursive: true });
  fs.writeFileSync(path.join(dir, "src", "lib", "util.ts"), "1");
  assert.deepEqual(await w.next("a file in a new directory"), [path.join("src", "lib", "util.ts")]);
  renameOver(path.join(dir, "src", "lib", "util.ts"), "2");
  assert.deepEqual(await w.next("a rename-over in the new directory"), [path.join("src", "lib", "util.ts")]);

  fs.writeFileSync(path.join(dir, ".sdk", "build", "script.js"), "x");
  fs.writeFileSync(path.join(dir, "node_modules", "x", "index.js"), "x");
  fs.writeFileSync(path.join(dir, ".git", "index"), "x");
  fs.writeFileSync(path.join(dir, "sdk.ts"), "config");
  assert.deepEqual(await w.next("ignored writes, then sdk.ts"), ["sdk.ts"]);
});
