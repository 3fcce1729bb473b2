import fs from "node:fs/promises";
import path from "node:path";
import { type Board, boardIds, isFirmwareVersion } from "@sdk/protocol";

/** Firmware release files: `<dataDir>/firmware/<version>/<board>.uf2`. */
export class FirmwareFiles {
  readonly root: string;

  constructor(dataDir: string) {
    this.root = path.join(dataDir, "firmware");
  }

  file(version: string, board: Board): string {
    if (!isFirmwareVersion(version)) throw new Error(`not a firmware version: ${version}`);
    if (!boardIds.includes(board)) throw new Error(`not a board: ${board}`);
    return path.join(this.root, version, `${board}.uf2`);
  }

  /** Written to a temp file first, then renamed into place: a reader never sees half a file. */
  async write(version: string, board: Board, bytes: Uint8Array): Promise<void> {
    const file = this.file(version, board);
    await fs.mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
    const temp = `${file}.tmp`;
    await fs.writeFile(temp, bytes);
    await fs.rename(temp, file);
  }

  /** `undefined` when the file is missing. */
  async read(version: string, board: Board): Promise<Uint8Array | undefined> {
    try {
      return new Uint8Array(await fs.readFile(this.file(version, board)));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw error;
    }
  }
}
