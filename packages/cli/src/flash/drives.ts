import fs from "node:fs/promises";
import path from "node:path";
import type { Board } from "@sdk/protocol";

/** A mounted BOOTSEL drive: a directory holding the bootrom's INFO_UF2.TXT. */
export interface BootselDrive {
  path: string;
  /** The `Board-ID:` line as written, e.g. "RPI-RP2". */
  boardId: string;
  /** The board family the chip takes firmware for; null for a Board-ID this CLI does not know. */
  board: Board | null;
}

/** The bootroms' Board-ID (FIRMWARE.md §4) and the board whose firmware that chip runs. */
const boardIds: Record<string, Board> = { "RPI-RP2": "pico_w", RP2350: "pico2_w" };

export const chipOf: Record<Board, string> = { pico_w: "RP2040", pico2_w: "RP2350" };

/** The drive's label as the user sees it in a file manager. */
export const driveLabel: Record<Board, string> = { pico_w: "RPI-RP2", pico2_w: "RP2350" };

/** Where to look: directories that may be a drive (`direct`) and directories whose children may be (`parents`). */
export interface MountPlaces {
  direct: string[];
  parents: string[];
}

/**
 * The usual mount points of removable drives. `SDK_FLASH_MOUNT_ROOTS` (paths joined by the
 * platform's path delimiter) replaces them: each one and each directory in it is a candidate.
 */
export function mountPlaces(
  env: Record<string, string | undefined>,
  platform: NodeJS.Platform = process.platform,
): MountPlaces {
  const override = env.SDK_FLASH_MOUNT_ROOTS;
  if (override !== undefined) {
    const roots = override.split(path.delimiter).filter(Boolean);
    return { direct: roots, parents: roots };
  }
  if (platform === "win32") {
    const letters = "DEFGHIJKLMNOPQRSTUVWXYZ".split("");
    return { direct: letters.map((l) => `${l}:\\`), parents: [] };
  }
  if (platform === "darwin") return { direct: [], parents: ["/Volumes"] };
  const user = env.USER ?? env.LOGNAME;
  const perUser = user ? [`/media/${user}`, `/run/media/${user}`] : [];
  return { direct: [], parents: [...perUser, "/media", "/mnt"] };
}

/** The Board-ID line of an INFO_UF2.TXT, or null when there is none. */
export function parseInfoUf2(text: string): { boardId: string; board: Board | null } | null {
  const line = /^Board-ID:[ \t]*(.*?)[ \t]*\r?$/m.exec(text);
  if (!line) return null;
  const boardId = line[1]!;
  return { boardId, board: boardIds[boardId] ?? null };
}

/** The drive at `dir`, or null when it holds no INFO_UF2.TXT with a Board-ID. */
export async function readDrive(dir: string): Promise<BootselDrive | null> {
  let text: string;
  try {
    text = await fs.readFile(path.join(dir, "INFO_UF2.TXT"), "utf8");
  } catch {
    return null;
  }
  const info = parseInfoUf2(text);
  return info ? { path: dir, ...info } : null;
}

async function children(dir: string): Promise<string[]> {
  try {
    const entries = await fs.readdir(dir, { withFileTypes: true });
    return entries.filter((e) => e.isDirectory()).map((e) => path.join(dir, e.name));
  } catch {
    return [];
  }
}

/** Every BOOTSEL drive mounted at these places, each once, sorted by path. */
export async function findDrives(places: MountPlaces): Promise<BootselDrive[]> {
  const candidates = [...places.direct, ...(await Promise.all(places.parents.map(children))).flat()];
  const found = new Map<string, BootselDrive>();
  for (const drive of await Promise.all(candidates.map(readDrive))) {
    if (!drive) continue;
    const real = await fs.realpath(drive.path).catch(() => drive.path);
    if (!found.has(real)) found.set(real, drive);
  }
  return [...found.values()].sort((a, b) => a.path.localeCompare(b.path));
}

/** How to get a board into BOOTSEL mode, for the "no drive found" message. */
export const bootselHowTo =
  "Unplug the board, hold its BOOTSEL button while plugging the USB cable back in, then let go: it shows up as a drive called RPI-RP2 (Pico W) or RP2350 (Pico 2 W). Then run sdk flash again, or name the drive with --drive PATH.";
