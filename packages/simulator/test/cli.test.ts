import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { describe, type TestContext, test } from "node:test";
import { fileURLToPath } from "node:url";
import { FakeServer } from "@sdk/conformance";
import { type Child, runNode, spawnNode, tempDir } from "@sdk/test-helpers";
import { parseCli, UsageError } from "../src/cli-args.ts";

const cli = fileURLToPath(new URL("../src/cli.ts", import.meta.url));

const env = { PATH: process.env.PATH ?? "" };
const run = (t: TestContext, args: string[]) => runNode(t, { args: [cli, ...args], env, timeoutMs: 15_000 });
const start = (t: TestContext, args: string[]) => spawnNode(t, { args: [cli, ...args], env });
const output = (sim: Child, pattern: RegExp) =>
  sim.waitForOutput((o) => pattern.test(o.stdout), 10_000, `output ${pattern}`);

function tempFile(t: TestContext, content: string): string {
  const file = path.join(tempDir(t, "sdk-sim-"), "credentials.json");
  fs.writeFileSync(file, content);
  return file;
}

describe("argument parsing", () => {
  const read = (files: Record<string, string>) => (p: string) => {
    const content = files[p];
    if (content === undefined) throw new Error("ENOENT: no such file");
    return content;
  };

  test("single device and credentials file forms", () => {
    assert.deepEqual(parseCli(["--server", "sdk.example.com", "--device", "d1", "--secret", "s"], read({})), {
      kind: "run",
      server: "sdk.example.com",
      url: "wss://sdk.example.com/v1/device",
      devices: [{ deviceId: "d1", secret: "s", board: "pico_w" }],
      quiet: false,
    });
    const file = JSON.stringify([
      { deviceId: "a", secret: "1" },
      { deviceId: "b", secret: "2", board: "pico_w" },
      { deviceId: "c", secret: "3" },
    ]);
    const parsed = parseCli(
      ["--server", "h:1", "--credentials", "c.json", "--count", "2", "--board", "pico2_w", "--quiet"],
      read({ "c.json": file }),
    );
    assert.equal(parsed.kind, "run");
    if (parsed.kind !== "run") return;
    assert.equal(parsed.url, "ws://h:1/v1/device");
    assert.equal(parsed.quiet, true);
    assert.deepEqual(parsed.devices, [
      { deviceId: "a", secret: "1", board: "pico2_w" },
      { deviceId: "b", secret: "2", board: "pico_w" },
    ]);
    assert.deepEqual(parseCli(["-h"], read({})), { kind: "help" });
  });

  test("usage errors", () => {
    const files = read({ "bad.json": "{", "obj.json": "{}", "nosecret.json": '[{"deviceId":"a"}]' });
    for (const args of [
      [],
      ["--device", "a", "--secret", "b"],
      ["--server", "h:1"],
      ["--server", "h:1", "--device", "a"],
      ["--server", "h:1", "--device", "a", "--secret", "b", "--board", "pico3"],
      ["--server", "h:1", "--device", "a", "--secret", "b", "--count", "2"],
      ["--server", "h:1", "--device", "a", "--secret", "b", "--credentials", "x.json"],
      ["--server", "h:1", "--credentials", "missing.json"],
      ["--server", "h:1", "--credentials", "bad.json"],
      ["--server", "h:1", "--credentials", "obj.json"],
      ["--server", "h:1", "--credentials", "nosecret.json"],
      ["--server", "h:1", "--credentials", "nosecret.json", "--count", "0"],
      ["--server", "h:1", "--device", "a", "--secret", "b", "extra"],
      ["--server", "h:1", "--device", "a", "--secret", "b", "--verbose"],
    ]) {
      assert.throws(() => parseCli(args, files), UsageError, args.join(" "));
    }
    assert.throws(
      () =>
        parseCli(
          ["--server", "h:1", "--credentials", "two.json", "--count", "3"],
          read({ "two.json": '[{"deviceId":"a","secret":"b"}]' }),
        ),
      /holds only 1 device/,
    );
    for (const [server, why] of [
      ["ftp://files.example.com", /unsupported scheme "ftp:\/\/"/],
      ["host:0", /port 0/],
    ] as const) {
      assert.throws(
        () => parseCli(["--server", server, "--device", "a", "--secret", "b"], files),
        why,
        server,
      );
    }
  });
});

describe("sdk-sim", () => {
  test("--help prints usage and exits 0", async (t) => {
    const help = await run(t, ["--help"]);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /Usage:/);
    assert.match(help.stdout, /--credentials <file>/);
  });

  test("usage errors exit 2 with a hint", async (t) => {
    const usage = await run(t, ["--server", "localhost:1"]);
    assert.equal(usage.code, 2);
    assert.match(usage.stderr, /--device and --secret, or --credentials/);
    assert.match(usage.stderr, /sdk-sim --help/);
  });

  test("runs devices from a credentials file, prints status and commands, closes on SIGTERM", async (t) => {
    const server = await FakeServer.start({ credentials: { dev_a: "sa", dev_b: "sb", dev_c: "sc" } });
    t.after(() => server.close());
    const file = tempFile(
      t,
      JSON.stringify([
        { deviceId: "dev_a", secret: "sa" },
        { deviceId: "dev_b", secret: "wrong", board: "pico2_w" },
        { deviceId: "dev_c", secret: "sc" },
      ]),
    );
    const sim = start(t, ["--server", server.address, "--credentials", file, "--count", "2"]);
    const conn = await server.nextConnection(10_000);
    assert.equal(conn.deviceId, "dev_a");
    await output(sim, /\[dev_a\] connected/);
    await output(sim, /\[dev_b\] auth failed: Invalid device credentials/);
    await conn.ok("gpio_write", { pin: "LED", value: 1 });
    await output(sim, /\[dev_a\] ← gpio_write \{"pin":"LED","value":1\} → null/);

    assert.equal((await sim.stop("SIGTERM", 15_000)).code, 0, sim.stderr());
    assert.equal((await conn.closed).code, 1000);
    assert.ok(!server.attempts.some((a) => a.deviceId === "dev_c"), "--count 2 ran only the first two");
  });

  test("SIGINT also exits 0", async (t) => {
    const server = await FakeServer.start({ credentials: { d: "s" } });
    t.after(() => server.close());
    const sim = start(t, [
      "--server",
      server.address,
      "--device",
      "d",
      "--secret",
      "s",
      "--board",
      "pico2_w",
    ]);
    const conn = await server.nextConnection(10_000);
    assert.equal(conn.hello?.board, "pico2_w");
    assert.equal((await sim.stop("SIGINT", 15_000)).code, 0, sim.stderr());
    assert.equal((await conn.closed).code, 1000);
  });
});
