import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { type TestContext, test } from "node:test";
import { within } from "@sdk/test-helpers";
import { watchTree } from "../src/watch-tree.ts";
import { gnuSed, tempDir } from "./helpers.ts";

/**
 * A watch that is asked what the user would see: `until(file)` waits until `file` is among the
 * changes reported since the previous call, however the debounce happened to split them into
 * batches (a stalled event loop can cut one save into two), and answers every file reported.
 */
function watched(t: TestContext, dir: string) {
  const batches: string[][] = [];
  let wake = () => {};
  const watch = watchTree(dir, (files) => {
    batches.push(files);
    wake();
  });
  t.after(() => watch.close());
  const until = (file: string, what: string) =>
    within(
      new Promise<string[]>((resolve) => {
        const check = () => {
          const files = new Set(batches.flat());
          if (!files.has(file)) return;
          batches.length = 0;
          resolve([...files].sort());
        };
        wake = check;
        check();
      }),
      30_000,
      `${file} reported as changed after ${what}`,
    );
  return { until };
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
  const index = path.join("src", "index.ts");
  for (let i = 1; i <= 3; i++) {
    renameOver(file, `v${i}`);
    assert.deepEqual(await w.until(index, `rename-over save ${i}`), [index]);
  }
  for (let i = 1; i <= 2 && gnuSed(t); i++) {
    execFileSync("sed", ["-i", "-e", `s/^.*$/sed${i}/`, file]);
    assert.equal(fs.readFileSync(file, "utf8").trim(), `sed${i}`);
    assert.deepEqual(await w.until(index, `sed -i ${i}`), [index]);
  }
  fs.writeFileSync(file, "in place");
  assert.deepEqual(await w.until(index, "a write in place"), [index]);
});

test("watchTree follows new directories and ignores .sdk, node_modules and .git", async (t) => {
  const dir = tempDir(t, "sdk-watch-");
  for (const d of [".sdk/build", "node_modules/x", ".git"])
    fs.mkdirSync(path.join(dir, d), { recursive: true });
  const w = watched(t, dir);
  const util = path.join("src", "lib", "util.ts");
  fs.mkdirSync(path.join(dir, "src", "lib"), { recursive: true });
  fs.writeFileSync(path.join(dir, util), "1");
  assert.deepEqual(await w.until(util, "a file in a new directory"), [util]);
  renameOver(path.join(dir, util), "2");
  assert.deepEqual(await w.until(util, "a rename-over in the new directory"), [util]);

  fs.writeFileSync(path.join(dir, ".sdk", "build", "script.js"), "x");
  fs.writeFileSync(path.join(dir, "node_modules", "x", "index.js"), "x");
  fs.writeFileSync(path.join(dir, ".git", "index"), "x");
  fs.writeFileSync(path.join(dir, "sdk.ts"), "config");
  // util.ts may come again: a late part of its rename-over, split off by a stalled event loop.
  const seen = await w.until("sdk.ts", "ignored writes, then sdk.ts");
  assert.deepEqual(
    seen.filter((f) => f !== util),
    ["sdk.ts"],
  );
});
