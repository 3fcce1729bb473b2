import fs from "node:fs/promises";
import path from "node:path";
import { type Board, boardIds, firmwareLimits, isFirmwareVersion } from "@sdk/protocol";
import type { Lifecycle } from "../lifecycle/lifecycle.ts";
import type { FirmwareService } from "./firmware.ts";

interface BundleLog {
  info(message: string): void;
  warn(message: string): void;
}

const boardFiles = boardIds.map((b) => `${b}.uf2`).join(" or ");

/**
 * Imports the read-only release bundle (`FIRMWARE_DIR/<version>/<board>.uf2`) into `DATA_DIR` when
 * the server starts. A file already stored with the same bytes is left alone; a bad file is
 * refused with one log line naming it and why, and the server starts anyway. Nothing is fetched
 * from anywhere else.
 */
export class FirmwareBundleImport implements Lifecycle {
  readonly name = "firmware bundle";
  readonly #dir: string | null;
  readonly #firmware: FirmwareService;
  readonly #log: BundleLog;

  constructor(deps: { dir: string | null; firmware: FirmwareService; log: BundleLog }) {
    this.#dir = deps.dir;
    this.#firmware = deps.firmware;
    this.#log = deps.log;
  }

  async start(): Promise<void> {
    // A cluster's instances read release files from the database: those stored here before go there.
    const shared = await this.#firmware.shareStored();
    if (shared > 0) this.#log.info(`firmware: ${shared} release files of DATA_DIR copied into the database`);
    const dir = this.#dir;
    if (dir === null) return;
    let versions: string[];
    try {
      versions = (await fs.readdir(dir)).sort();
    } catch (error) {
      this.#log.warn(`firmware bundle: FIRMWARE_DIR ${dir} cannot be read (${(error as Error).message})`);
      return;
    }
    for (const version of versions) {
      const versionDir = path.join(dir, version);
      if (!(await fs.stat(versionDir)).isDirectory()) {
        this.#log.warn(`firmware bundle: refused ${version}: not a <version>/ directory`);
        continue;
      }
      if (!isFirmwareVersion(version)) {
        this.#log.warn(
          `firmware bundle: refused ${version}/: the directory name is not a semantic version like 1.0.0`,
        );
        continue;
      }
      for (const name of (await fs.readdir(versionDir)).sort()) {
        await this.#importFile(version, name, path.join(versionDir, name));
      }
    }
  }

  stop(): void {}

  async #importFile(version: string, name: string, file: string): Promise<void> {
    const label = `${version}/${name}`;
    const refuse = (reason: string) => this.#log.warn(`firmware bundle: refused ${label}: ${reason}`);
    const board = name.endsWith(".uf2") ? name.slice(0, -4) : "";
    if (!(boardIds as string[]).includes(board)) return refuse(`not a board's file (${boardFiles})`);
    const stat = await fs.stat(file);
    if (!stat.isFile()) return refuse("not a file");
    if (stat.size > firmwareLimits.uf2MaxBytes) {
      return refuse(`${stat.size} bytes is more than ${firmwareLimits.uf2MaxBytes} (4 MiB)`);
    }
    const outcome = await this.#firmware.storeBundled(version, board as Board, await fs.readFile(file));
    switch (outcome.kind) {
      case "stored":
        return this.#log.info(
          `firmware bundle: imported ${label} (${outcome.row.bytes} bytes, sha256 ${outcome.row.sha256})`,
        );
      case "unchanged":
        return;
      case "invalid":
        return refuse(outcome.reason);
      case "exists":
        return refuse(
          `a different UF2 is already stored as ${version} for ${board} (from ${outcome.row.source === "upload" ? "an upload" : "an earlier bundle"}); releases never change, so the stored one stays`,
        );
    }
  }
}
