import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { type TestContext, test } from "node:test";
import { SdkClient } from "@sdk/client";
import { type DeviceConfig, decodeConfigBlock } from "@sdk/protocol";
import { extractConfigSector, readBinaryInfo } from "@sdk/protocol/uf2";
import { SimulatedDevice } from "@sdk/simulator";
import { runNode, spawnNode, syntheticRelease, waitUntil, within } from "@sdk/test-helpers";
import { z } from "zod";
import { findDrives, mountPlaces, parseInfoUf2 } from "../src/flash/drives.ts";
import { boardServerAddress, isLoopback } from "../src/flash/server-address.ts";
import { writeToDrive } from "../src/flash/write.ts";
import { sdkBin, startServer, tempDir } from "./helpers.ts";

/** Releases the test server imports at boot (FIRMWARE_DIR): 1.1.0 for both boards, 1.0.0 for the Pico W. */
function releaseBundle(t: TestContext): string {
  const dir = tempDir(t, "sdk-flash-releases-");
  for (const [version, board] of [
    ["1.1.0", "pico_w"],
    ["1.1.0", "pico2_w"],
    ["1.0.0", "pico_w"],
  ] as const) {
    fs.mkdirSync(path.join(dir, version), { recursive: true });
    fs.writeFileSync(path.join(dir, version, `${board}.uf2`), syntheticRelease({ board, version }));
  }
  return dir;
}

const info = {
  rp2040: "UF2 Bootloader v3.0\nModel: Raspberry Pi RP2\nBoard-ID: RPI-RP2\n",
  rp2350: "UF2 Bootloader v1.0\r\nModel: Raspberry Pi RP2350\r\nBoard-ID: RP2350\r\n",
};

/** A fake BOOTSEL drive: a directory with INFO_UF2.TXT (and INDEX.HTM, as the bootrom shows). */
function fakeDrive(root: string, label: string, text: string | null): string {
  const dir = path.join(root, label);
  fs.mkdirSync(dir, { recursive: true });
  if (text !== null) fs.writeFileSync(path.join(dir, "INFO_UF2.TXT"), text);
  fs.writeFileSync(path.join(dir, "INDEX.HTM"), "<html></html>");
  return dir;
}

/** The config block in its sector of the UF2 that was written. */
function configIn(file: string, board: "pico_w" | "pico2_w"): DeviceConfig {
  const decoded = decodeConfigBlock(extractConfigSector(new Uint8Array(fs.readFileSync(file)), board));
  assert.ok(decoded.ok, `the config block decodes: ${JSON.stringify(decoded)}`);
  return decoded.config;
}

test("drive detection: INFO_UF2.TXT variants, nothing, several, and the usual mount points", async (t) => {
  assert.deepEqual(parseInfoUf2(info.rp2040), { boardId: "RPI-RP2", board: "pico_w" });
  assert.deepEqual(parseInfoUf2(info.rp2350), { boardId: "RP2350", board: "pico2_w" });
  assert.deepEqual(parseInfoUf2("Board-ID: ACME-42\n"), { boardId: "ACME-42", board: null });
  assert.equal(parseInfoUf2("UF2 Bootloader v3.0\nModel: Raspberry Pi RP2\n"), null);

  const root = tempDir(t, "sdk-flash-mounts-");
  assert.deepEqual(await findDrives({ direct: [], parents: [root] }), [], "an empty mount point");
  fakeDrive(root, "USB STICK", null);
  fakeDrive(root, "NOTES", "Model: nothing here\n");
  assert.deepEqual(await findDrives({ direct: [], parents: [root] }), [], "no INFO_UF2.TXT, no Board-ID");
  const a = fakeDrive(root, "RPI-RP2", info.rp2040);
  const b = fakeDrive(root, "RP2350", info.rp2350);
  const c = fakeDrive(root, "OTHER", "Board-ID: ACME-42\n");
  fs.symlinkSync(a, path.join(root, "also-RPI-RP2"));
  const found = await findDrives({ direct: [b], parents: [root, path.join(root, "missing")] });
  assert.deepEqual(
    found.map((d) => [path.basename(d.path), d.board]),
    [
      ["OTHER", null],
      ["RP2350", "pico2_w"],
      ["RPI-RP2", "pico_w"],
    ],
    "each drive once (a symlink or a second listing is the same drive), unknown chips kept for the message",
  );
  assert.equal(found.find((d) => d.board === null)?.path, c);

  assert.deepEqual(mountPlaces({ USER: "ada" }, "linux"), {
    direct: [],
    parents: ["/media/ada", "/run/media/ada", "/media", "/mnt"],
  });
  assert.deepEqual(mountPlaces({}, "darwin"), { direct: [], parents: ["/Volumes"] });
  const win = mountPlaces({}, "win32");
  assert.equal(win.direct[0], "D:\\");
  assert.equal(win.direct.at(-1), "Z:\\");
  assert.equal(win.direct.length, 23);
  assert.deepEqual(mountPlaces({ SDK_FLASH_MOUNT_ROOTS: `/x${path.delimiter}/y`, USER: "ada" }, "linux"), {
    direct: ["/x", "/y"],
    parents: ["/x", "/y"],
  });
});

test("the server address for the board follows the login, and localhost is spotted", () => {
  assert.equal(boardServerAddress("http://pi.local:8080"), "pi.local:8080");
  assert.equal(boardServerAddress("http://10.0.0.5"), "10.0.0.5:80");
  assert.equal(boardServerAddress("https://devices.example.com"), "devices.example.com");
  assert.equal(boardServerAddress("https://devices.example.com:8443/"), "https://devices.example.com:8443");
  assert.equal(boardServerAddress("http://[::1]:8080"), "[::1]:8080");
  for (const url of [
    "ws://localhost:8080/v1/device",
    "ws://127.0.0.1:1/",
    "ws://[::1]:80/",
    "ws://a.localhost:1/",
  ])
    assert.ok(isLoopback(url), url);
  assert.ok(!isLoopback("ws://192.168.1.20:8080/v1/device"));
});

test("the write path: one file on the drive, flushed; a drive that vanishes mid-write is an error", async (t) => {
  const drive = fakeDrive(tempDir(t, "sdk-flash-write-"), "RPI-RP2", info.rp2040);
  const uf2 = new Uint8Array(512 * 9).map((_, i) => i & 0xff);
  const written = await writeToDrive(drive, uf2);
  assert.equal(written.bytes, uf2.length);
  assert.equal(written.file, path.join(drive, "sdk-flash.uf2"));
  assert.deepEqual(new Uint8Array(fs.readFileSync(written.file)), uf2);
  await assert.rejects(writeToDrive(path.join(drive, "gone"), uf2), /ENOENT/);
});

async function world(t: TestContext) {
  const { url } = await startServer(t, { FIRMWARE_DIR: releaseBundle(t) });
  const anon = new SdkClient({ baseUrl: url });
  await anon.api.register({ body: { email: "maker@example.com", password: "correct horse battery" } });
  const { token } = await anon.api.login({
    body: { email: "maker@example.com", password: "correct horse battery", issueToken: true },
  });
  const client = new SdkClient({ baseUrl: url, token: token!.token });
  const project = await client.api.createProject({ body: { name: "bench" } });
  const home = tempDir(t, "sdk-flash-home-");
  const mounts = tempDir(t, "sdk-flash-mounts-");
  const env = (extra: Record<string, string> = {}) => ({
    PATH: process.env.PATH ?? "",
    HOME: home,
    SDK_TOKEN: token!.token,
    SDK_HOST: url,
    SDK_FLASH_MOUNT_ROOTS: mounts,
    ...extra,
  });
  const run = (args: string[], extra: Record<string, string> = {}) =>
    runNode(t, { args: [sdkBin, "flash", "--project", project.id, ...args], cwd: home, env: env(extra) });
  const live = (args: string[], extra: Record<string, string> = {}) =>
    spawnNode(t, { args: [sdkBin, "flash", "--project", project.id, ...args], cwd: home, env: env(extra) });
  /** A simulated board running what was flashed: the config block's credentials and server. */
  const boot = (config: DeviceConfig, board: "pico_w" | "pico2_w", firmware = "1.1.0") => {
    const sim = new SimulatedDevice({
      server: config.server,
      deviceId: config.deviceId,
      secret: config.secret,
      board,
      firmware,
      reconnect: false,
    });
    t.after(() => sim.stop());
    sim.start();
    return sim;
  };
  return { url, client, project, home, mounts, env, run, live, boot };
}

const wifiEnv = { SDK_WIFI_PASSWORD: "hunter2hunter2" };

test("sdk status names a newer release for a board that runs an older one", async (t) => {
  const w = await world(t);
  const { device, credentials } = await w.client.api.createDevice({
    params: { projectId: w.project.id },
    body: { name: "old timer", board: "pico_w" },
  });
  const config = {
    server: new URL(w.url).host,
    deviceId: device.id,
    secret: credentials.secret,
  } as DeviceConfig;
  w.boot(config, "pico_w", "1.0.0");
  const ids = { projectId: w.project.id, deviceId: device.id };
  await waitUntil(async () => (await w.client.api.getDevice({ params: ids })).status === "online", 15_000);
  assert.equal((await w.client.api.getDevice({ params: ids })).firmwareUpdate, "1.1.0");
  const status = await runNode(t, {
    args: [sdkBin, "status", "--project", w.project.id],
    cwd: w.home,
    env: w.env({ NO_COLOR: "1" }),
  });
  assert.equal(status.code, 0, status.stderr);
  assert.match(
    status.stdout,
    new RegExp(`1\\.0\\.0 \\(1\\.1\\.0 available: sdk flash --device ${device.id}\\)`),
  );
});

test("refused before anything is written: no drive, several drives, a chip that does not match", async (t) => {
  const w = await world(t);
  const none = await w.run(["--name", "x", "--wifi-ssid", "home"], wifiEnv);
  assert.equal(none.code, 1, none.stderr);
  assert.match(none.stderr, /No board in BOOTSEL mode found/);
  assert.match(none.stderr, /hold its BOOTSEL button while plugging the USB cable/);
  assert.match(none.stderr, /RPI-RP2 \(Pico W\) or RP2350 \(Pico 2 W\)/);

  const pico2 = fakeDrive(w.mounts, "RP2350", info.rp2350);
  const pico = fakeDrive(w.mounts, "RPI-RP2", info.rp2040);
  const several = await w.run(["--name", "x", "--wifi-ssid", "home"], wifiEnv);
  assert.equal(several.code, 2, several.stderr);
  assert.match(several.stderr, /2 BOOTSEL drives are mounted; pick one with --drive/);
  assert.ok(
    several.stderr.includes(`1. ${pico2} (RP2350)`) && several.stderr.includes(`2. ${pico} (RPI-RP2)`),
  );

  const wrong = await w.run(
    ["--drive", pico2, "--board", "pico_w", "--name", "x", "--wifi-ssid", "home", "--json"],
    wifiEnv,
  );
  assert.equal(wrong.code, 1);
  const body = JSON.parse(wrong.stdout);
  assert.equal(body.ok, false);
  assert.match(body.error.message, /has an RP2350 chip \(a pico2_w\), but --board pico_w needs an RP2040/);
  assert.match(body.error.message, /Nothing was written/);

  const registered = await w.client.api.createDevice({
    params: { projectId: w.project.id },
    body: { name: "old", board: "pico_w" },
  });
  const mismatch = await w.run(
    ["--drive", pico2, "--device", registered.device.id, "--wifi-ssid", "home", "--yes"],
    wifiEnv,
  );
  assert.equal(mismatch.code, 1);
  assert.match(
    mismatch.stderr,
    new RegExp(`${registered.device.id} is registered as a pico_w and needs an RP2040`),
  );

  const notADrive = await w.run(["--drive", w.home, "--name", "x", "--wifi-ssid", "home"], wifiEnv);
  assert.equal(notADrive.code, 1);
  assert.match(notADrive.stderr, /is not a BOOTSEL drive/);

  for (const dir of [pico, pico2]) assert.ok(!fs.existsSync(path.join(dir, "sdk-flash.uf2")), dir);
  const devices = await w.client.api.listDevices({ params: { projectId: w.project.id } });
  assert.deepEqual(
    devices.map((d) => d.name),
    ["old"],
    "no device was created by a refused flash",
  );
  // The registered device's secret still works: its credentials were not rotated.
  const sim = w.boot(
    {
      ...registered.credentials,
      server: new URL(w.url).host,
      wifiSsid: "",
      wifiPassphrase: "",
      wifiCountry: "XX",
    },
    "pico_w",
  );
  await waitOnline(w.client, w.project.id, registered.device.id);
  await sim.stop();
});

async function waitOnline(client: SdkClient, projectId: string, deviceId: string): Promise<void> {
  await waitUntil(
    async () => (await client.api.getDevice({ params: { projectId, deviceId } })).status === "online",
    10_000,
    `${deviceId} online`,
  );
}

const Result = z.object({
  device: z.object({ id: z.string(), name: z.string(), board: z.string(), status: z.string() }),
  board: z.enum(["pico_w", "pico2_w"]),
  release: z.string(),
  drive: z.string().optional(),
  out: z.string().optional(),
  online: z.boolean(),
});

test("non-interactive: --wifi-ssid + SDK_WIFI_PASSWORD + --yes + --json creates, writes, waits; re-flashing rotates", async (t) => {
  const w = await world(t);
  const drive = fakeDrive(w.mounts, "RP2350", info.rp2350);
  const file = path.join(drive, "sdk-flash.uf2");
  const first = w.live(
    ["--name", "greenhouse", "--wifi-ssid", "home 2.4", "--wifi-country", "de", "--yes", "--json"],
    wifiEnv,
  );
  await first.waitForOutput((s) => /Wrote \d+ bytes to /.test(s.stderr), 20_000, "the write");
  const config = configIn(file, "pico2_w");
  const written = new Uint8Array(fs.readFileSync(file));
  assert.equal(readBinaryInfo(written, "pico2_w").version, "1.1.0", "the newest release");
  assert.equal(config.wifiSsid, "home 2.4");
  assert.equal(config.wifiPassphrase, "hunter2hunter2");
  assert.equal(config.wifiCountry, "DE");
  assert.equal(config.server, new URL(w.url).host, "the logged-in host without its scheme");
  assert.match(first.stderr(), /only 2\.4 GHz|2\.4 GHz Wi-Fi networks only/);
  assert.ok(first.stderr().includes(`ws://${new URL(w.url).host}/v1/device`), "the socket URL is shown");
  assert.match(first.stderr(), /this computer's own address/, "127.0.0.1 is warned about");
  assert.ok(!(first.stdout() + first.stderr()).includes("hunter2hunter2"), "the passphrase is never printed");
  const sim = w.boot(config, "pico2_w");
  const exit = await within(first.exited, 20_000, "sdk flash to finish");
  assert.equal(exit.code, 0, first.stderr());
  const result = Result.parse(JSON.parse(first.stdout()));
  assert.equal(result.device.id, config.deviceId);
  assert.deepEqual(
    [
      result.device.name,
      result.device.board,
      result.device.status,
      result.board,
      result.release,
      result.drive,
      result.online,
    ],
    ["greenhouse", "pico2_w", "online", "pico2_w", "1.1.0", drive, true],
  );

  // Flashing the same device again: new credentials, the running board is cut off.
  fs.rmSync(file);
  const closed = new Promise<void>((resolve) => sim.once("disconnected", () => resolve()));
  const again = w.live(
    ["--device", config.deviceId, "--release", "1.1.0", "--wifi-ssid", "home 2.4", "--yes", "--json"],
    wifiEnv,
  );
  await again.waitForOutput((s) => /Wrote \d+ bytes to /.test(s.stderr), 20_000, "the second write");
  const second = configIn(file, "pico2_w");
  assert.equal(second.deviceId, config.deviceId);
  assert.notEqual(second.secret, config.secret, "re-flashing issues new credentials");
  await within(closed, 10_000, "the old board to be disconnected");
  w.boot(second, "pico2_w");
  assert.equal((await within(again.exited, 20_000, "the second flash")).code, 0, again.stderr());
  assert.equal(Result.parse(JSON.parse(again.stdout())).online, true);

  // --out writes a file and does not wait; the board comes from --board or the device.
  const out = path.join(w.home, "board.uf2");
  const toFile = await w.run(
    [
      "--device",
      config.deviceId,
      "--out",
      out,
      "--wifi-ssid",
      "home",
      "--server",
      "10.0.0.5:8080",
      "--yes",
      "--json",
    ],
    wifiEnv,
  );
  assert.equal(toFile.code, 0, toFile.stderr);
  const filed = Result.parse(JSON.parse(toFile.stdout));
  assert.deepEqual([filed.out, filed.online, filed.board, filed.drive], [out, false, "pico2_w", undefined]);
  assert.equal(configIn(out, "pico2_w").server, "10.0.0.5:8080");
  assert.ok(toFile.stderr.includes("ws://10.0.0.5:8080/v1/device"));
  assert.doesNotMatch(toFile.stderr, /own address/);
  const noBoard = await w.run(["--name", "spare", "--out", out, "--wifi-ssid", "home"], wifiEnv);
  assert.equal(noBoard.code, 2);
  assert.match(noBoard.stderr, /--board pico_w or --board pico2_w/);
  const oldRelease = await w.run(
    ["--name", "spare", "--board", "pico2_w", "--release", "1.0.0", "--out", out, "--wifi-ssid", "home"],
    wifiEnv,
  );
  assert.equal(oldRelease.code, 1);
  assert.match(oldRelease.stderr, /Firmware 1\.0\.0 has no build for pico2_w; releases with one: 1\.1\.0/);
  const noPassword = await w.run([
    "--name",
    "spare",
    "--board",
    "pico_w",
    "--out",
    out,
    "--wifi-ssid",
    "home",
  ]);
  assert.equal(noPassword.code, 2);
  assert.match(noPassword.stderr, /set SDK_WIFI_PASSWORD/);
  const shortPassword = await w.run(
    ["--name", "spare", "--board", "pico_w", "--out", out, "--wifi-ssid", "home"],
    { SDK_WIFI_PASSWORD: "short" },
  );
  assert.equal(shortPassword.code, 2);
  assert.match(shortPassword.stderr, /wifiPassphrase must be empty \(an open network\) or 8-63 characters/);
  assert.deepEqual(
    (await w.client.api.listDevices({ params: { projectId: w.project.id } })).map((d) => d.name),
    ["greenhouse"],
    "refused flashes create no device",
  );
});

test("a board that does not come online: the timeout names the usual causes", async (t) => {
  const w = await world(t);
  const out = path.join(w.home, "board.uf2");
  const json = await w.run(
    [
      "--name",
      "quiet",
      "--board",
      "pico_w",
      "--out",
      out,
      "--wait",
      "--timeout",
      "1",
      "--wifi-ssid",
      "home",
      "--json",
    ],
    wifiEnv,
  );
  assert.equal(json.code, 1);
  const body = JSON.parse(json.stdout);
  assert.equal(body.online, false);
  assert.equal(body.error.code, "timeout");
  assert.equal(body.out, out);
  const human = await w.run(
    ["--device", body.device.id, "--out", out, "--wait", "--timeout", "1", "--wifi-ssid", "home"],
    wifiEnv,
  );
  assert.equal(human.code, 1);
  for (const cause of [
    /Wi-Fi password is wrong/,
    /5 GHz/,
    /not reachable from the board's network/,
    /localhost, 127\.0\.0\.1, ::1/,
  ])
    assert.match(human.stderr, cause);
  assert.match(human.stderr, /did not come online within 1 s/);
});

/** `script` (util-linux) gives the command a pseudo-terminal; our pipe is its keyboard. */
const hasScript = spawnSync("script", ["--version"]).status === 0;
const shellQuote = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;

test("interactive: drive, name, Wi-Fi and passphrase asked on a terminal (passphrase not echoed)", {
  skip: hasScript ? false : "no `script` (util-linux) to make a pseudo-terminal",
}, async (t) => {
  const w = await world(t);
  const pico = fakeDrive(w.mounts, "RPI-RP2", info.rp2040);
  fakeDrive(w.mounts, "RP2350", info.rp2350);
  const command = [process.execPath, sdkBin, "flash", "--project", w.project.id, "--timeout", "20"]
    .map(shellQuote)
    .join(" ");
  const child = spawn("script", ["-q", "-e", "-c", command, "/dev/null"], {
    cwd: w.home,
    env: { ...w.env(), SHELL: "/bin/sh", TERM: "dumb" },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let screen = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => {
    screen += d;
  });
  const exited = new Promise<number | null>((resolve) => child.once("close", (code) => resolve(code)));
  t.after(() => {
    if (child.exitCode === null) child.kill("SIGKILL");
  });
  const answer = async (prompt: RegExp, text: string) => {
    const from = screen.length;
    await waitUntil(
      () => prompt.test(screen.slice(from > 0 ? 0 : 0)),
      20_000,
      `the prompt ${prompt}:\n${screen}`,
    );
    child.stdin.write(`${text}\r`);
  };
  await answer(/Which one\? \[1-2\] $/, "2");
  await answer(/Name of the new device: $/, "porch");
  await answer(/Wi-Fi network \(SSID\): $/, "attic");
  await answer(/Wi-Fi password for attic \(empty for an open network\): $/, "s3cret-passphrase");
  const file = path.join(pico, "sdk-flash.uf2");
  await waitUntil(() => /Wrote \d+ bytes/.test(screen), 20_000, `the write:\n${screen}`);
  const config = configIn(file, "pico_w");
  assert.deepEqual([config.wifiSsid, config.wifiPassphrase], ["attic", "s3cret-passphrase"]);
  w.boot(config, "pico_w");
  assert.equal(await within(exited, 30_000, "sdk flash on a terminal"), 0, screen);
  assert.ok(!screen.includes("s3cret-passphrase"), `the passphrase is not echoed:\n${screen}`);
  assert.match(screen, new RegExp(`${config.deviceId} \\(porch\\) is online`));
  const device = await w.client.api.getDevice({
    params: { projectId: w.project.id, deviceId: config.deviceId },
  });
  assert.deepEqual([device.name, device.board], ["porch", "pico_w"]);
});
