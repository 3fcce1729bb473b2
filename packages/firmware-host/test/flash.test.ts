// From `sdk flash` to an online board with no hardware: the CLI composes a UF2 from a release the
// server imported at boot, the config sector is cut out of that UF2, and the firmware's Linux build
// boots from it (as a Pico reads it from flash) and comes online on the real server. Flashing again
// issues new credentials: the first board is cut off and its credentials get 401.
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { type TestContext, test } from "node:test";
import { fileURLToPath } from "node:url";
import { SdkClient } from "@sdk/client";
import { decodeConfigBlock } from "@sdk/protocol";
import { extractConfigSector } from "@sdk/protocol/uf2";
import { runNode, startTestServer, syntheticRelease, tempDir, waitUntil } from "@sdk/test-helpers";
import { firmwareHost } from "../src/build.ts";

const host = firmwareHost();
if ("skip" in host) console.log(`# SKIPPED: ${host.skip}`);
const sdkBin = path.join(
  path.dirname(fileURLToPath(import.meta.resolve("@sdk/cli"))),
  "..",
  "bin",
  "sdk.mjs",
);
const waitMs = 15_000;

function boot(t: TestContext, binary: string, configFile: string): ChildProcess {
  const child = spawn(binary, ["--config", configFile, "--backoff-cap-ms", "500"], {
    stdio: ["pipe", "ignore", "ignore"],
  });
  t.after(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.stdin!.end("stop\n");
      await new Promise((resolve) => child.once("exit", resolve));
    }
  });
  return child;
}

test("sdk flash --out → config sector → the host firmware boots from it and comes online; re-flashing rotates", {
  skip: "skip" in host ? host.skip : false,
}, async (t) => {
  if ("skip" in host) return;
  const releases = tempDir(t, "sdk-releases-");
  fs.mkdirSync(path.join(releases, "1.0.0"));
  fs.writeFileSync(
    path.join(releases, "1.0.0", "pico_w.uf2"),
    syntheticRelease({ board: "pico_w", version: "1.0.0" }),
  );
  const s = await startTestServer(t, { env: { FIRMWARE_DIR: releases } });
  const anon = new SdkClient({ baseUrl: s.url });
  const login = { email: "maker@example.com", password: "correct horse battery" };
  await anon.api.register({ body: login });
  const { token } = await anon.api.login({ body: { ...login, issueToken: true } });
  const client = new SdkClient({ baseUrl: s.url, token: token!.token });
  const project = await client.api.createProject({ body: { name: "bench" } });
  const home = tempDir(t, "sdk-flash-home-");
  const flash = async (out: string, args: string[]) => {
    const run = await runNode(t, {
      args: [
        sdkBin,
        "flash",
        "--project",
        project.id,
        "--out",
        out,
        "--wifi-ssid",
        "lab",
        "--yes",
        "--json",
        ...args,
      ],
      cwd: home,
      env: {
        PATH: process.env.PATH ?? "",
        HOME: home,
        SDK_TOKEN: token!.token,
        SDK_HOST: s.url,
        SDK_WIFI_PASSWORD: "lab-passphrase",
      },
    });
    assert.equal(run.code, 0, run.stderr);
    const uf2 = new Uint8Array(fs.readFileSync(out));
    const sector = extractConfigSector(uf2, "pico_w");
    const decoded = decodeConfigBlock(sector);
    assert.ok(decoded.ok, JSON.stringify(decoded));
    const configFile = `${out}.config`;
    fs.writeFileSync(configFile, sector);
    return {
      config: decoded.config,
      configFile,
      result: JSON.parse(run.stdout) as { device: { id: string } },
    };
  };
  const status = async (deviceId: string) =>
    (await client.api.getDevice({ params: { projectId: project.id, deviceId } })).status;
  /** The HTTP status of a device upgrade request with these credentials (101, or 401 when refused). */
  const upgrade = (deviceId: string, secret: string) =>
    new Promise<number>((resolve, reject) => {
      const request = http.get(`${s.url}/v1/device`, {
        headers: {
          Connection: "Upgrade",
          Upgrade: "websocket",
          "Sec-WebSocket-Version": "13",
          "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
          Authorization: `Basic ${Buffer.from(`${deviceId}:${secret}`).toString("base64")}`,
        },
      });
      request.on("response", (response) => {
        response.resume();
        resolve(response.statusCode ?? 0);
      });
      request.on("upgrade", (_response, socket) => {
        socket.destroy();
        resolve(101);
      });
      request.on("error", reject);
    });

  const first = await flash(path.join(home, "first.uf2"), [
    "--name",
    "bench board",
    "--board",
    "pico_w",
    "--server",
    new URL(s.url).host,
  ]);
  assert.equal(first.config.server, new URL(s.url).host);
  const deviceId = first.config.deviceId;
  const board1 = boot(t, host.binary, first.configFile);
  await waitUntil(
    async () => (await status(deviceId)) === "online",
    waitMs,
    "the flashed board to come online",
  );
  const device = await client.api.getDevice({ params: { projectId: project.id, deviceId } });
  assert.equal(device.firmwareVersion, "0.1.0", "the host build's own version, from hello");

  const second = await flash(path.join(home, "second.uf2"), [
    "--device",
    deviceId,
    "--server",
    new URL(s.url).host,
  ]);
  assert.equal(second.config.deviceId, deviceId);
  assert.notEqual(second.config.secret, first.config.secret, "re-flashing issues new credentials");
  assert.equal(await upgrade(deviceId, first.config.secret), 401, "the old credentials are refused");
  await waitUntil(
    async () => (await status(deviceId)) === "offline",
    waitMs,
    "the first board to be cut off",
  );
  boot(t, host.binary, second.configFile);
  await waitUntil(
    async () => (await status(deviceId)) === "online",
    waitMs,
    "the re-flashed board to come online",
  );
  assert.equal(board1.exitCode, null, "the first board keeps running (and keeps being refused)");
});
