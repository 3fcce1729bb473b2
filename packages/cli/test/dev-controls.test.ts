import assert from "node:assert/strict";
import path from "node:path";
import { test } from "node:test";
import { sdk, sdkLive, tempDir } from "./helpers.ts";

test("sdk dev: press 15 on stdin presses the scaffolded project's Button (pull-up, watch, debounce → binary_sensor state)", async (t) => {
  const home = tempDir(t, "sdk-devctl-home-");
  const work = tempDir(t, "sdk-devctl-work-");
  const init = await sdk(t, ["init", "buttons", "--no-link"], { home, cwd: work });
  assert.equal(init.code, 0, init.stderr);
  const dev = sdkLive(t, ["dev", "--port", "0"], {
    home,
    cwd: path.join(work, "buttons"),
    env: { TMPDIR: tempDir(t, "sdk-devctl-tmp-") },
    openStdin: true,
  });
  await dev.waitForOutput(
    (s) => /Type press 15, set 15 0, release 15 or help/.test(s.stdout),
    30_000,
    "sdk dev to start and say how to drive inputs",
  );
  // The template sets GP15 up (input, pull-up) and watches it once the board connects.
  await dev.waitForOutput((s) => /\bonline\b/.test(s.stdout), 15_000, "the board to come online");
  // The Button is a binary_sensor: true while pressed, false once let go.
  const states = () => [...dev.stdout().matchAll(/state button = (true|false)\b/g)].map((m) => m[1]);
  // The script sets GP15 up and watches it right after the board connects. `release 15` changes
  // nothing on an undriven pin and says whether the pin is watched: ask until it is, so that the
  // press below is the first thing to happen on a set-up pin.
  const count = (pattern: RegExp) => dev.stdout().match(pattern)?.length ?? 0;
  for (
    let asked = 1;
    !/GP15 released \(watched: both edges, 20 ms debounce\)\n(?!.*GP15 released)/s.test(dev.stdout());
    asked++
  ) {
    assert.ok(asked <= 100, "the script never watched GP15");
    const answers = count(/GP15 released/g);
    dev.child.stdin!.write("release 15\n");
    await dev.waitForOutput(() => count(/GP15 released/g) > answers, 10_000, "an answer to release 15");
  }
  const before = states().length;
  dev.child.stdin!.write("press 15\n");
  const after = () => states().slice(before).join();
  await dev.waitForOutput(() => after() === "true,false", 15_000, "pressed (true), then released (false)");

  dev.child.stdin!.write("set GP15 0\n");
  await dev.waitForOutput((s) => /state button = true\s*$/.test(s.stdout), 10_000, "held down");
  dev.child.stdin!.write("release 15\n");
  await dev.waitForOutput((s) => /state button = false\s*$/.test(s.stdout), 10_000, "let go");

  dev.child.stdin!.write("press 99\n");
  await dev.waitForOutput((s) => /GP99 is not a usable GPIO/.test(s.stdout), 10_000, "a clear refusal");
  dev.child.kill("SIGINT");
  assert.equal((await dev.exited).code, 0, dev.stderr());
});
