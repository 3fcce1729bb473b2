import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { describe, type TestContext, test } from "node:test";
import { fileURLToPath } from "node:url";
import { type FakeConnection, FakeServer } from "@sdk/conformance";
import { spawnNode } from "@sdk/test-helpers";
import { runControl } from "../src/index.ts";
import { connectedDevice } from "./helpers/setup.ts";

const changes = (conn: FakeConnection) =>
  conn.messages.filter((m) => m.type === "gpio_change").map((m) => [m.pin, m.value]);

/** A button the way `sdk init`'s template sets it up: GP15 input with pull-up, both edges, 20 ms. */
async function button(conn: FakeConnection, pull: "up" | "down" = "up") {
  await conn.ok("pin_mode", { pin: 15, mode: "input", pull });
  await conn.ok("gpio_watch", { pin: 15, edge: "both", debounceMs: 20 });
}

describe("simulated inputs", () => {
  test("sim_press goes through the pin: pull-up → pressed to ground, debounced, then let go", async (t) => {
    const { conn, device } = await connectedDevice(t);
    await button(conn);
    const reply = await conn.command("sim_press", { pin: 15, holdMs: 80 });
    assert.deepEqual([reply.type, reply.value], ["result", null]);
    await conn.message((m) => m.type === "gpio_change" && m.value === 1, 5_000);
    assert.deepEqual(changes(conn), [
      [15, 0],
      [15, 1],
    ]);
    assert.deepEqual(
      device.history(15).map((h) => h.value),
      [1, 0, 1],
    );

    // Under a pull-down the button goes to 3V3.
    await button(conn, "down");
    const before = changes(conn).length;
    await device.press(15, 60);
    await conn.message((m) => m.type === "gpio_change" && m.value === 0, 5_000, conn.messages.length - 1);
    assert.deepEqual(changes(conn).slice(before), [
      [15, 1],
      [15, 0],
    ]);
  });

  test("a press shorter than the debounce is not reported, as on the board", async (t) => {
    const { conn, device } = await connectedDevice(t);
    await button(conn);
    await device.press(15, 5);
    // Then a held change and its release: frames arrive in order, so once the release is in,
    // a report of the short press would be in too.
    await conn.command("sim_input", { pin: 15, level: 0 });
    await conn.message((m) => m.type === "gpio_change" && m.value === 0, 5_000);
    await conn.command("sim_input", { pin: 15, level: null });
    await conn.message((m) => m.type === "gpio_change" && m.value === 1, 5_000);
    assert.deepEqual(changes(conn), [
      [15, 0],
      [15, 1],
    ]);
  });

  test("sim_input drives and releases; bad arguments are invalid_argument", async (t) => {
    const { conn, device } = await connectedDevice(t);
    await button(conn);
    await conn.ok("sim_input" as never, { pin: 15, level: 0 });
    await conn.message((m) => m.type === "gpio_change" && m.value === 0);
    assert.equal(device.pin(15).driven, 0);
    await conn.ok("sim_input" as never, { pin: 15, level: null });
    await conn.message((m) => m.type === "gpio_change" && m.value === 1);
    assert.equal(device.pin(15).driven, null);
    for (const args of [{ pin: 15, level: 2 }, { pin: 23, level: 0 }, { level: 0 }, { pin: 15, holdMs: 0 }]) {
      const type = "holdMs" in args ? "sim_press" : "sim_input";
      const reply = await conn.command(type, args);
      assert.deepEqual([reply.type, reply.code], ["error", "invalid_argument"], JSON.stringify(args));
    }
    // In plain words, as the server says them (describeIssues of @sdk/protocol).
    assert.equal((await conn.command("sim_input", { level: 0 })).message, "sim_input: pin: is required");
    assert.equal(
      (await conn.command("sim_input", { pin: 99, level: 0 })).message,
      "sim_input: pin: must be at most 29",
    );
  });

  test("control lines: press, set, release, help, and clear refusals", async (t) => {
    const { conn, device } = await connectedDevice(t);
    assert.match(runControl([device], "press 15"), /^pressed GP15 \(not watched/);
    await button(conn);
    assert.equal(runControl([device], "set GP15 0"), "GP15 driven low (watched: both edges, 20 ms debounce)");
    await conn.message((m) => m.type === "gpio_change" && m.value === 0);
    assert.equal(runControl([device], "release 15"), "GP15 released (watched: both edges, 20 ms debounce)");
    await conn.message((m) => m.type === "gpio_change" && m.value === 1);
    assert.match(runControl([device], "help"), /press <pin> \[ms\]/);
    assert.throws(() => runControl([device], "press"), /which pin\?/);
    assert.throws(() => runControl([device], "press 15 0"), /hold time is 1–10000 ms/);
    assert.throws(() => runControl([device], "set 15 2"), /set: give a pin and 0 or 1/);
    assert.throws(() => runControl([device], "press 23"), /GP23 is not a usable GPIO/);
    assert.throws(() => runControl([device], "jump"), /unknown command "jump"/);
  });
});

const cli = fileURLToPath(new URL("../src/cli.ts", import.meta.url));

/** sdk-sim against a fake server whose device has a watched button on GP15. */
async function simWithButton(t: TestContext, command: (args: string[]) => string[]) {
  const server = await FakeServer.start({ credentials: { d: "s" } });
  t.after(() => server.close());
  const sim = spawnNode(t, {
    args: command([cli, "--server", server.address, "--device", "d", "--secret", "s"]),
    env: { PATH: process.env.PATH ?? "", TERM: "dumb" },
    openStdin: true,
  });
  const conn = await server.nextConnection(15_000);
  await button(conn);
  return { sim, conn };
}

describe("sdk-sim", () => {
  test("reads control lines on stdin: press 15 presses the button", async (t) => {
    const { sim, conn } = await simWithButton(t, (args) => args);
    await sim.waitForOutput(
      (o) => /Type press 15, set 15 0, release 15 or help/.test(o.stdout),
      10_000,
      "the hint",
    );
    sim.child.stdin!.write("press 15\n");
    await conn.message((m) => m.type === "gpio_change" && m.value === 1, 5_000);
    assert.deepEqual(changes(conn), [
      [15, 0],
      [15, 1],
    ]);
    await sim.waitForOutput((o) => /let go of GP15/.test(o.stdout), 5_000, "the release");
    sim.child.stdin!.write("set 99 0\n");
    await sim.waitForOutput((o) => /which pin\?|GP99/.test(o.stdout), 5_000, "a refusal");
    sim.child.kill("SIGINT");
    assert.equal((await sim.exited).code, 0);
  });

  test("on a terminal, the b key presses GP15 and ? lists the keys", async (t) => {
    try {
      execFileSync("script", ["--version"], { stdio: "ignore" });
    } catch {
      const message =
        "script (util-linux) is missing: the terminal-key test needs it to make a pseudo-terminal";
      if (process.env.CI) assert.fail(message);
      t.skip(message);
      return;
    }
    // script(1) runs sdk-sim on a pseudo-terminal and copies our pipe to it.
    const { sim, conn } = await simWithButton(t, (args) => [
      "-e",
      `require("node:child_process").spawnSync("script", ["-qfec", ${JSON.stringify(
        `${process.execPath} ${args.map((a) => `'${a}'`).join(" ")}`,
      )}, "/dev/null"], { stdio: "inherit" })`,
    ]);
    await sim.waitForOutput(
      (o) => /Press b to press the button on GP15/.test(o.stdout),
      10_000,
      "the key hint",
    );
    sim.child.stdin!.write("?");
    await sim.waitForOutput((o) => /b {3}press the button on GP15/.test(o.stdout), 5_000, "the key help");
    sim.child.stdin!.write("b");
    await conn.message((m) => m.type === "gpio_change" && m.value === 1, 5_000);
    assert.deepEqual(changes(conn), [
      [15, 0],
      [15, 1],
    ]);
    sim.child.stdin!.write("\u0003");
    assert.equal((await sim.exited).code, 0, sim.stdout());
  });
});
