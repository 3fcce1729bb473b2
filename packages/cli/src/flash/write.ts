import fs from "node:fs/promises";
import path from "node:path";
import { reasonOf } from "../errors.ts";

/** The name of the file copied to the drive; the bootrom reads the blocks, not the name. */
const flashFileName = "sdk-flash.uf2";

/** Errors of a drive that went away: after a complete write, the board rebooting into the new firmware. */
const goneCodes = new Set(["ENOENT", "EIO", "ENODEV", "ENXIO", "ESTALE", "EROFS", "EPERM", "EBADF"]);

export interface DriveWrite {
  file: string;
  bytes: number;
  /** The drive vanished while the write was flushed or closed: the board rebooted, as expected. */
  rebooted: boolean;
}

/**
 * Writes the UF2 to the drive in one write and flushes it. The bootrom reboots the chip once it
 * has the last block, so the drive may vanish before the flush or close returns; that counts as
 * success when every byte was written. Throws with what happened otherwise.
 */
export async function writeToDrive(drive: string, uf2: Uint8Array): Promise<DriveWrite> {
  const file = path.join(drive, flashFileName);
  const handle = await fs.open(file, "w");
  let written = 0;
  try {
    while (written < uf2.length) {
      const { bytesWritten } = await handle.write(uf2, written, uf2.length - written);
      if (bytesWritten === 0) throw new Error("the drive took no more bytes");
      written += bytesWritten;
    }
  } catch (error) {
    await handle.close().catch(() => {});
    throw new Error(
      `writing ${file} stopped after ${written} of ${uf2.length} bytes: ${reasonOf(error)}. Put the board in BOOTSEL mode again and retry.`,
    );
  }
  let rebooted = false;
  let failure: unknown;
  for (const step of [() => handle.sync(), () => handle.close()]) {
    try {
      await step();
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code && goneCodes.has(code)) rebooted = true;
      else failure ??= error;
    }
  }
  if (failure && !rebooted) throw failure;
  return { file, bytes: written, rebooted };
}
