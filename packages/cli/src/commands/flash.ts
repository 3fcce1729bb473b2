import fs from "node:fs/promises";
import path from "node:path";
import type { SdkClient } from "@sdk/client";
import { type Board, boardIds, type Device, type DeviceCredentials, encodeConfigBlock } from "@sdk/protocol";
import type { Command } from "../command.ts";
import { connect, type Globals, projectId } from "../context.ts";
import { CliError, UsageError } from "../errors.ts";
import {
  type BootselDrive,
  bootselHowTo,
  chipOf,
  driveLabel,
  findDrives,
  mountPlaces,
  readDrive,
} from "../flash/drives.ts";
import { type ReleaseInfo, type Releases, serverReleases } from "../flash/release.ts";
import { boardServerAddress, isLoopback, socketUrlOf } from "../flash/server-address.ts";
import { writeToDrive } from "../flash/write.ts";
import { ask, isInteractive } from "../prompt.ts";

const name = "flash";

/** What `sdk flash` was asked to do, from its flags and the environment. */
interface FlashRequest {
  deviceId?: string;
  deviceName?: string;
  board?: Board;
  wifiSsid?: string;
  wifiCountry: string;
  server?: string;
  release?: string;
  drive?: string;
  out?: string;
  yes: boolean;
  wait: boolean;
  timeoutMs: number;
}

/** The ways a board is usually kept from coming online, for the timeout message. */
const offlineCauses = [
  "the Wi-Fi password is wrong",
  "the network is 5 GHz only (the board's radio has 2.4 GHz only)",
  "the server is not reachable from the board's network (a firewall, another subnet, a VPN)",
  "the server address names this computer (localhost, 127.0.0.1, ::1), which the board cannot reach",
];

function request(values: Record<string, string | boolean | undefined>): FlashRequest {
  const str = (key: string) => values[key] as string | undefined;
  if (str("device") && str("name"))
    throw new UsageError("--device flashes an existing device, --name names a new one: give one", name);
  if (str("drive") && str("out"))
    throw new UsageError("--out writes a file instead of a drive: not both", name);
  const board = str("board");
  if (board !== undefined && !boardIds.includes(board as Board))
    throw new UsageError(`--board must be one of ${boardIds.join(", ")} (got "${board}")`, name);
  const country = (str("wifi-country") ?? "XX").toUpperCase();
  if (!/^[A-Z]{2}$/.test(country))
    throw new UsageError('--wifi-country is two letters (ISO 3166-1, e.g. DE), or "XX" for worldwide', name);
  const seconds = values.timeout === undefined ? 120 : Number(values.timeout);
  if (!Number.isFinite(seconds) || seconds <= 0)
    throw new UsageError("--timeout is a number of seconds greater than 0", name);
  return {
    deviceId: str("device"),
    deviceName: str("name"),
    board: board as Board | undefined,
    wifiSsid: str("wifi-ssid"),
    wifiCountry: country,
    server: str("server"),
    release: str("release"),
    drive: str("drive"),
    out: str("out"),
    yes: Boolean(values.yes),
    wait: !str("out") || Boolean(values.wait),
    timeoutMs: seconds * 1000,
  };
}

/** Asks on the terminal, or fails with what to pass instead when there is none. */
async function askOr(question: string, instead: string, hidden = false): Promise<string> {
  if (!isInteractive()) throw new UsageError(`No terminal to ask on: ${instead}`, name);
  return ask(question, hidden);
}

async function chooseDrive(g: Globals, req: FlashRequest): Promise<BootselDrive> {
  if (req.drive) {
    const drive = await readDrive(req.drive);
    if (!drive)
      throw new CliError(
        `${req.drive} is not a BOOTSEL drive (it has no INFO_UF2.TXT with a Board-ID line). ${bootselHowTo}`,
      );
    return drive;
  }
  const drives = await findDrives(mountPlaces(g.env));
  if (drives.length === 0) throw new CliError(`No board in BOOTSEL mode found. ${bootselHowTo}`);
  if (drives.length === 1) return drives[0]!;
  const list = drives.map((d, i) => `  ${i + 1}. ${d.path} (${d.boardId})`).join("\n");
  if (!isInteractive())
    throw new UsageError(
      `${drives.length} BOOTSEL drives are mounted; pick one with --drive:\n${list}`,
      name,
    );
  g.out.info(`${drives.length} boards are in BOOTSEL mode:\n${list}`);
  for (;;) {
    const answer = Number((await ask(`Which one? [1-${drives.length}] `)).trim());
    if (Number.isInteger(answer) && answer >= 1 && answer <= drives.length) return drives[answer - 1]!;
  }
}

/** The board to flash, refusing any disagreement between the drive, --board and the device. */
function settleBoard(drive: BootselDrive | undefined, req: FlashRequest, device: Device | undefined): Board {
  if (drive && !drive.board)
    throw new CliError(
      `${drive.path} is a BOOTSEL drive of an unknown chip (Board-ID: ${drive.boardId}); sdk flash knows RPI-RP2 (pico_w) and RP2350 (pico2_w). Nothing was written.`,
    );
  if (device && req.board && device.board !== req.board)
    throw new CliError(
      `${device.id} is registered as a ${device.board}, not a ${req.board}. Nothing was written.`,
    );
  const wanted = req.board ?? device?.board;
  const found = drive?.board ?? undefined;
  if (found && wanted && found !== wanted) {
    const whose = req.board ? `--board ${req.board}` : `${device!.id} is registered as a ${wanted} and`;
    throw new CliError(
      `The board at ${drive!.path} has an ${chipOf[found]} chip (a ${found}), but ${whose} needs an ${chipOf[wanted]} (${driveLabel[wanted]} drive). Nothing was written; plug in the right board or pick another with --drive.`,
    );
  }
  const board = wanted ?? found;
  if (!board)
    throw new UsageError("Which board is the file for? Pass --board pico_w or --board pico2_w", name);
  return board;
}

function pickRelease(releases: ReleaseInfo[], req: FlashRequest, board: Board): ReleaseInfo {
  if (releases.length === 0)
    throw new CliError(
      "The server has no firmware releases. Its admin adds them with FIRMWARE_DIR or an upload (docs/firmware.md).",
    );
  const release = req.release
    ? releases.find((r) => r.version === req.release)
    : (releases.find((r) => r.newest) ?? releases[0]);
  if (!release)
    throw new CliError(
      `The server has no firmware release ${req.release}; it has ${releases.map((r) => r.version).join(", ")}.`,
    );
  if (!release.boards.some((b) => b.board === board)) {
    const withBoard = releases.filter((r) => r.boards.some((b) => b.board === board)).map((r) => r.version);
    throw new CliError(
      `Firmware ${release.version} has no build for ${board}${withBoard.length ? `; releases with one: ${withBoard.join(", ")} (--release)` : ""}.`,
    );
  }
  return release;
}

/** The Wi-Fi network: flags and SDK_WIFI_PASSWORD, else asked (the passphrase without echo). */
async function wifi(g: Globals, req: FlashRequest): Promise<{ ssid: string; passphrase: string }> {
  g.out.info(g.out.dim("The board's radio works with 2.4 GHz Wi-Fi networks only (not 5 GHz)."));
  const ssid =
    req.wifiSsid ??
    (await askOr("Wi-Fi network (SSID): ", "pass --wifi-ssid and set SDK_WIFI_PASSWORD")).trim();
  const fromEnv = g.env.SDK_WIFI_PASSWORD;
  const passphrase =
    fromEnv ??
    (await askOr(
      `Wi-Fi password for ${ssid} (empty for an open network): `,
      "set SDK_WIFI_PASSWORD (empty for an open network)",
      true,
    ));
  return { ssid, passphrase };
}

/** The device's config block; a mistake in the Wi-Fi settings or address is a usage error. */
function configBlock(
  credentials: DeviceCredentials,
  network: { ssid: string; passphrase: string },
  req: FlashRequest,
  server: string,
): Uint8Array {
  try {
    return encodeConfigBlock({
      deviceId: credentials.deviceId,
      secret: credentials.secret,
      wifiSsid: network.ssid,
      wifiPassphrase: network.passphrase,
      wifiCountry: req.wifiCountry,
      server,
    });
  } catch (error) {
    throw new UsageError((error as Error).message.replace(/^config block: /, ""), name);
  }
}

const placeholderId = `dev_${"a".repeat(20)}`;

/** Polls the device until a new connection is online (lastSeenAt changes as it connects). */
async function waitOnline(
  client: SdkClient,
  device: Device,
  timeoutMs: number,
  pollMs: number,
): Promise<Device | null> {
  const deadline = Date.now() + timeoutMs;
  const before = device.lastSeenAt;
  for (;;) {
    const now = await client.api.getDevice({ params: { projectId: device.projectId, deviceId: device.id } });
    if (now.status === "online" && now.lastSeenAt !== before) return now;
    if (Date.now() >= deadline) return null;
    await new Promise((r) => setTimeout(r, Math.min(pollMs, Math.max(0, deadline - Date.now()))));
  }
}

/** Makes the sdk flash command around a source of releases (the server's; tests pass their own). */
function flashCommand(releasesOf: (client: SdkClient) => Releases): Command {
  return {
    name,
    summary: "Flash a board in BOOTSEL mode so it comes online as a device (no compiler needed)",
    usage:
      "sdk flash [--device dev_…|--name NAME] [--project prj_…] [--board pico_w|pico2_w] [--wifi-ssid S] [--server ADDRESS] [--release VERSION] [--drive PATH] [--out FILE.uf2]",
    details: [
      "Put the board in BOOTSEL mode first: hold its BOOTSEL button while plugging in the USB cable; it shows up as a drive called RPI-RP2 (Pico W) or RP2350 (Pico 2 W). sdk flash finds the drive, creates a device in the project (or, with --device, gives an existing one new credentials: the old secret stops working), asks for the Wi-Fi network, writes the server's firmware release with the device's settings to the board, and waits until the device is online.",
      "For scripts: --wifi-ssid with the password in the environment variable SDK_WIFI_PASSWORD (never a flag, so it stays out of shell history; empty for an open network), --name or --device, and --yes. The board's radio works with 2.4 GHz networks only. The board connects to --server, by default the server you are logged in to (http://h:8080 becomes h:8080, plain ws://; https://h becomes h, TLS on 443).",
    ].join("\n\n"),
    options: {
      device: { type: "string" },
      name: { type: "string" },
      board: { type: "string" },
      "wifi-ssid": { type: "string" },
      "wifi-country": { type: "string" },
      server: { type: "string" },
      release: { type: "string" },
      drive: { type: "string" },
      out: { type: "string" },
      wait: { type: "boolean" },
      timeout: { type: "string" },
      yes: { type: "boolean", short: "y" },
    },
    optionHelp: [
      "--device <id>          flash an existing device: it gets new credentials (asks first if it is online)",
      "--name <name>          the name of the new device (asked when not given)",
      "--board <board>        pico_w or pico2_w (default: what the drive or the device says)",
      "--wifi-ssid <ssid>     the Wi-Fi network (2.4 GHz); the password comes from SDK_WIFI_PASSWORD",
      "--wifi-country <cc>    the Wi-Fi country code, e.g. DE (default XX: worldwide settings)",
      "--server <address>     where the board connects (default: the server you are logged in to)",
      "--release <version>    the firmware release (default: the newest)",
      "--drive <path>         the BOOTSEL drive (default: found under the usual mount points)",
      "--out <file.uf2>       write the UF2 to a file instead of a drive (does not wait unless --wait)",
      "--wait                 with --out: wait for the device to come online",
      "--timeout <seconds>    how long to wait for the device to come online (default 120)",
      "--yes, -y              do not ask before re-flashing a device that is online",
    ],
    json: true,
    async run({ values, g }) {
      const req = request(values);
      const { client, host } = await connect(g);
      return runFlash(g, req, client, host, releasesOf(client));
    },
  };
}

async function runFlash(
  g: Globals,
  req: FlashRequest,
  client: SdkClient,
  host: string,
  releases: Releases,
): Promise<number> {
  const project = await projectId(g);
  const out = g.out;

  // 1. The board, and every reason to refuse it, before anything changes.
  const drive = req.out ? undefined : await chooseDrive(g, req);
  const existing = req.deviceId
    ? await client.api.getDevice({ params: { projectId: project, deviceId: req.deviceId } })
    : undefined;
  const board = settleBoard(drive, req, existing);
  if (drive) out.info(`Found a ${board} in BOOTSEL mode at ${out.bold(drive.path)}`);

  // 2. The device: confirm a re-flash of a board that is online; name a new one.
  if (existing?.status === "online" && !req.yes) {
    const answer = await askOr(
      `${existing.id} (${existing.name}) is online right now. Flashing gives it new credentials: the board running now is disconnected and cannot reconnect. Continue? [y/N] `,
      "pass --yes to re-flash a device that is online",
    );
    if (!/^y(es)?$/i.test(answer.trim())) throw new CliError("Cancelled; nothing was changed.");
  }
  const deviceName = existing
    ? existing.name
    : (req.deviceName ??
      (await askOr("Name of the new device: ", "pass --name NAME or --device dev_…")).trim());
  if (!existing && !deviceName) throw new UsageError("The device needs a name (--name)", name);

  // 3. Where the board connects, and the Wi-Fi network.
  const server = req.server ?? boardServerAddress(host);
  const socket = socketUrlOf(server);
  if ("error" in socket) throw new UsageError(`--server ${server}: ${socket.error}`, name);
  out.info(`The board will connect to ${out.bold(socket.url)}`);
  if (isLoopback(socket.url))
    out.warn(
      `Warning: ${server} is this computer's own address; a board on the network cannot reach it. Pass --server with an address the board can reach (e.g. the computer's LAN IP and port).`,
    );
  const network = await wifi(g, req);
  configBlock({ deviceId: existing?.id ?? placeholderId, secret: "x" }, network, req, server);

  // 4. The firmware, fetched before the device changes.
  const release = pickRelease(await releases.list(), req, board);
  out.step(`Downloading firmware ${release.version} for ${board}`);
  const image = await releases.download(release.version, board);
  out.stopSpinner();

  // 5. Now the device: new credentials (the old secret stops working) or a new device.
  let device: Device;
  let credentials: DeviceCredentials;
  if (existing) {
    credentials = await client.api.rotateDeviceCredentials({
      params: { projectId: project, deviceId: existing.id },
    });
    device = existing;
    out.info(`Issued new credentials for ${out.bold(existing.id)}; the old secret no longer works.`);
  } else {
    const created = await client.api.createDevice({
      params: { projectId: project },
      body: { name: deviceName, board },
    });
    ({ device, credentials } = created);
    out.info(`Created device ${out.bold(device.id)} (${device.name}) in ${project}`);
  }
  // Read after the change: a board that was online is being disconnected; a new connection moves lastSeenAt.
  const baseline = await client.api.getDevice({ params: { projectId: project, deviceId: device.id } });

  let uf2: Uint8Array;
  try {
    uf2 = releases.compose(image, board, configBlock(credentials, network, req, server));
  } catch (error) {
    throw new CliError(
      `Firmware ${release.version} for ${board} cannot be flashed: ${(error as Error).message}. The device's new credentials are not on any board yet; run sdk flash --device ${device.id} again with another --release.`,
    );
  }

  // 6. Write it.
  let where: { drive: string } | { out: string };
  if (drive) {
    if (!(await readDrive(drive.path)))
      throw new CliError(
        `The drive at ${drive.path} is gone. Put the board in BOOTSEL mode again and run sdk flash --device ${device.id} (the device exists now; flashing again gives it fresh credentials).`,
      );
    out.step(`Writing ${uf2.length} bytes to ${drive.path}`);
    const written = await writeToDrive(drive.path, uf2);
    out.stopSpinner();
    out.info(
      `${out.green("✔")} Wrote ${written.bytes} bytes to ${written.file}${written.rebooted ? "; the board rebooted into the new firmware" : "; the board reboots into the new firmware"}`,
    );
    where = { drive: drive.path };
  } else {
    const file = path.resolve(g.dir, req.out!);
    await fs.writeFile(file, uf2);
    out.info(`${out.green("✔")} Wrote ${uf2.length} bytes to ${file}; copy it to the board's BOOTSEL drive`);
    where = { out: file };
  }

  // 7. Wait for the board.
  let online: Device | null = null;
  if (req.wait) {
    out.step(`Waiting for ${device.id} to come online (up to ${Math.round(req.timeoutMs / 1000)} s)`);
    online = await waitOnline(client, baseline, req.timeoutMs, 1000);
    out.stopSpinner();
    if (!online) {
      const doc = { device: baseline, board, release: release.version, ...where, online: false };
      if (out.json) {
        out.result({
          ok: false,
          ...doc,
          error: { code: "timeout", message: "the device did not come online" },
        });
        return 1;
      }
      throw new CliError(
        `${device.id} did not come online within ${Math.round(req.timeoutMs / 1000)} s. The usual causes:\n${offlineCauses.map((c) => `  - ${c}`).join("\n")}\nThe board's LED and its USB serial output (115200 baud) say more. To try again with other settings, put the board in BOOTSEL mode and run sdk flash --device ${device.id}.`,
      );
    }
  }
  const final = online ?? baseline;
  out.result({ device: final, board, release: release.version, ...where, online: online !== null });
  if (online)
    out.line(
      `${out.green("✔")} ${device.id} (${device.name}) is online, running firmware ${online.firmwareVersion ?? release.version}`,
    );
  else
    out.line(
      `${device.id} (${device.name}) is ready: once the board has the file, it connects to ${socket.url}`,
    );
  return 0;
}

export const flash = flashCommand(serverReleases);
