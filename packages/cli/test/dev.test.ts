import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { gnuSed, sdk, sdkLive, tempDir } from "./helpers.ts";

test("sdk dev runs the script on a simulated board, picks up an edit, and stops cleanly on SIGINT", async (t) => {
  const home = tempDir(t, "sdk-dev-home-");
  const work = tempDir(t, "sdk-devtest-work-");
  // Its own TMPDIR, so that other processes' temp dirs cannot be counted as this one's.
  const tmp = tempDir(t, "sdk-devtest-tmp-");
  const devDirs = () => new Set(fs.readdirSync(tmp).filter((d) => d.startsWith("sdk-dev-")));
  const init = await sdk(t, ["init", "blinky", "--no-link"], { home, cwd: work });
  assert.equal(init.code, 0, init.stderr);
  const dir = path.join(work, "blinky");
  const script = (word: string) => `import { DeviceScript, OnboardLED } from "@sdk/device";
export default class Main extends DeviceScript {
  async onDeviceConnect() {
    console.log("${word} from the simulated board");
    await this.env.DEVICE.gpioWrite(OnboardLED, 1);
    this.env.DEVICE.emitState("led", 1);
  }
}
`;
  fs.writeFileSync(path.join(dir, "src", "index.ts"), script("hello"));
  const before = devDirs();
  const dev = sdkLive(t, ["dev", "--port", "0"], { home, cwd: dir, env: { TMPDIR: tmp } });
  const running = /running at (http:\/\/127\.0\.0\.1:\d+)/;
  await dev.waitForOutput((s) => running.test(s.stdout), 30_000, "the local URL");
  const url = running.exec(dev.stdout())![1]!;
  assert.doesNotMatch(url, /:0$/, "the URL has the port the server got");
  await dev.waitForOutput(
    (s) => s.stdout.includes("hello from the simulated board"),
    15_000,
    "the script's log line",
  );
  await dev.waitForOutput((s) => /state led = 1/.test(s.stdout), 10_000, "the state change");
  assert.equal((await fetch(`${url}/health`)).status, 200, "the local server answers");
  const created = [...devDirs()].filter((d) => !before.has(d));
  assert.equal(created.length, 1, "one temporary data directory");

  fs.writeFileSync(path.join(dir, "src", "index.ts"), script("edited"));
  await dev.waitForOutput(
    (s) => s.stdout.includes("edited from the simulated board"),
    20_000,
    "the edit to be redeployed",
  );
  // stderr is another pipe: its line may come after the script's log on stdout.
  await dev.waitForOutput((s) => /deployed v2/.test(s.stderr), 20_000, "the second deployment");

  // Editors that save atomically write a new file and rename it over the old one; every such
  // save must be seen, not only the first.
  const index = path.join(dir, "src", "index.ts");
  let version = 2;
  const redeployed = async (word: string, how: string) => {
    version++;
    await dev.waitForOutput(
      (s) => s.stdout.includes(`${word} from the simulated board`),
      20_000,
      `${how} to be redeployed and run`,
    );
    await dev.waitForOutput(
      (s) => s.stderr.includes(`deployed v${version}`),
      20_000,
      `deployment v${version}`,
    );
  };
  for (const n of [1, 2, 3]) {
    fs.writeFileSync(path.join(dir, "src", ".index.ts.swp"), script(`renamed${n}`));
    fs.renameSync(path.join(dir, "src", ".index.ts.swp"), index);
    await redeployed(`renamed${n}`, `rename-over save ${n}`);
  }
  if (gnuSed(t)) {
    for (const n of [1, 2]) {
      execFileSync("sed", ["-i", "-e", `s/renamed3\\|sedded[0-9]/sedded${n}/`, index]);
      await redeployed(`sedded${n}`, `sed -i edit ${n}`);
    }
  }

  dev.child.kill("SIGINT");
  assert.equal((await dev.exited).code, 0, dev.stderr());
  assert.ok(!fs.existsSync(path.join(tmp, created[0]!)), "the temporary data is removed");
  await assert.rejects(fetch(`${url}/health`), "the local server is gone");
});
