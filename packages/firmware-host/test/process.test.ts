// sdk-firmware-host as a program: its options, its control channel's edge cases, and stopping.
// Nothing listens on the port it is given, so it keeps retrying while the test talks to it.
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { test } from "node:test";
import { freePort } from "@sdk/test-helpers";
import { firmwareHost } from "../src/build.ts";

const host = firmwareHost();
if ("skip" in host) console.log(`# SKIPPED: ${host.skip}`);
const skip = "skip" in host ? host.skip : false;
const binary = "skip" in host ? "" : host.binary;

async function nowhere(): Promise<string[]> {
  return ["--url", `127.0.0.1:${await freePort()}`, "--device", "dev_nobody", "--secret", "s"];
}

test("bad options exit 2 with the usage; --help and --version exit 0", { skip }, async () => {
  for (const args of [["--backoff-cap-ms", "0"], ["--board", "pico3_w"], ["--url"], []]) {
    const run = spawnSync(
      binary,
      args[0] === "--url" || args.length === 0 ? args : [...(await nowhere()), ...args],
      {
        encoding: "utf8",
      },
    );
    assert.equal(run.status, 2, `${args.join(" ")}: ${run.stderr}`);
    assert.match(run.stderr, /^sdk-firmware-host: .+\n/);
  }
  const help = spawnSync(binary, ["--help"], { encoding: "utf8" });
  assert.equal(help.status, 0);
  assert.match(help.stdout, /--config FILE/);
  assert.match(spawnSync(binary, ["--version"], { encoding: "utf8" }).stdout, /^\d+\.\d+\.\d+/);
});

test("control lines: an overlong line is refused whole, a last line without a newline is answered, end of input stops", {
  skip,
}, async () => {
  const child = spawn(binary, await nowhere(), { stdio: ["pipe", "pipe", "ignore"] });
  let stdout = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk;
  });
  const exited = once(child, "exit");
  child.stdin.write(`uart 0 ${"ab".repeat(40_000)}\npin LED\ninput 3 1\npin 3`);
  child.stdin.end();
  const [code] = await exited;
  assert.equal(code, 0);
  assert.deepEqual(stdout.trim().split("\n"), [
    "error the line is longer than 65536 bytes",
    "ok 0",
    "ok",
    "ok 1",
  ]);
});

test("--no-control ignores stdin; SIGTERM stops the device and exits 0", { skip }, async () => {
  const child = spawn(binary, [...(await nowhere()), "--no-control"], { stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
  });
  const exited = once(child, "exit");
  // It runs (retrying the closed port) although stdin is at its end; wait for its first attempt.
  await new Promise<void>((resolve) => {
    const check = () => (/connect/i.test(stderr) ? resolve() : child.stderr.once("data", check));
    check();
  });
  assert.equal(child.exitCode, null);
  child.kill("SIGTERM");
  const [code] = await exited;
  assert.equal(code, 0);
});
