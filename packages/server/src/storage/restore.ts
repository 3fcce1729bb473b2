import { randomBytes } from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import { type BackupManifest, backupsDirName, readArchive } from "./backup-archive.ts";
import { DataDirError } from "./data-dir.ts";
import { acquireDataDirLock, type DataDirLock, lockFileName } from "./data-dir-lock.ts";
import { syncPath, syncTree } from "./fsync.ts";
import {
  asideDir,
  finishInterruptedRestore,
  journalFileName,
  removeJournal,
  stagingDir,
  writeJournal,
} from "./restore-journal.ts";
import { ArchiveError } from "./tar.ts";

/** A restore that must not go ahead (a non-empty directory without --force, say). */
export class RestoreError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "RestoreError";
  }
}

export interface RestoreResult {
  manifest: BackupManifest;
  dataDir: string;
  /** Top-level entries of the data directory that the restore replaced (with --force). */
  replaced: string[];
  /** What was done first about a restore cut off earlier (see finishInterruptedRestore). */
  recovered: "finished" | "cleaned" | null;
}

/** Entries of a data directory a restore leaves alone: scheduled backups, the lock, a filesystem's lost+found. */
const kept = new Set([backupsDirName, lockFileName, journalFileName, "lost+found"]);

/** What is in a directory, apart from what a restore keeps: `null` when it does not exist. */
async function contents(dir: string): Promise<string[] | null> {
  try {
    return (await fs.readdir(dir)).filter((name) => !kept.has(name)).sort();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return null;
    if (code === "ENOTDIR") throw new RestoreError(`${dir} is not a directory`);
    throw error;
  }
}

/**
 * Restores an archive into `dataDir`. The whole archive is verified (manifest, every size and
 * SHA-256) before anything is written; a damaged one throws `ArchiveError` and leaves the
 * directory as it was. Files are then extracted into a staging dir inside the data directory and
 * moved into place, so a failure midway leaves the old contents; `backups/` is kept.
 */
export async function restoreArchive(
  archive: string,
  dataDir: string,
  options: { force: boolean },
): Promise<RestoreResult> {
  const dir = path.resolve(dataDir);
  try {
    if (!(await fs.stat(archive)).isFile()) throw new RestoreError(`${archive} is not a file`);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT")
      throw new RestoreError(`${archive} does not exist`);
    throw error;
  }
  let existing = await contents(dir);
  // A server on the directory (or another restore) refuses this, --force or not; while it runs, no server starts.
  let lock = existing === null ? undefined : lockForRestore(dir);
  try {
    const recovered = existing === null ? null : await finishInterruptedRestore(dir);
    if (recovered) existing = await contents(dir);
    if (existing?.length && !options.force)
      throw new RestoreError(
        `${recovered === "finished" ? "an interrupted restore was finished first; " : recovered === "cleaned" ? "the leftovers of an interrupted restore were removed first; " : ""}${dir} is not empty (it holds ${existing.join(", ")}): restore into an empty directory, or pass --force to replace its contents (scheduled backups in ${backupsDirName}/ are kept)`,
      );
    const manifest = await readArchive(archive); // verified first: nothing written yet
    await fs.mkdir(dir, { recursive: true, mode: 0o700 });
    lock ??= lockForRestore(dir);
    return { ...(await swapIn(archive, dir, manifest)), recovered };
  } finally {
    lock?.release();
  }
}

function lockForRestore(dir: string): DataDirLock {
  try {
    return acquireDataDirLock(dir, "restore", { strict: true });
  } catch (error) {
    if (error instanceof DataDirError) throw new RestoreError(`${error.message}; nothing was written`);
    throw error;
  }
}

async function swapIn(archive: string, dir: string, manifest: BackupManifest): Promise<RestoreResult> {
  const id = `${process.pid}-${randomBytes(4).toString("hex")}`;
  const staging = stagingDir(dir, id);
  const aside = asideDir(dir, id);
  await fs.mkdir(staging, { mode: 0o700 });
  try {
    const extracted = await readArchive(archive, staging); // checked again as it is written
    if (JSON.stringify(extracted) !== JSON.stringify(manifest))
      throw new ArchiveError("the archive changed while it was being restored");
    await syncTree(staging); // on disk before anything old moves
  } catch (error) {
    await fs.rm(staging, { recursive: true, force: true });
    throw error;
  }

  // The swap: the old entries move aside, the restored ones in; on a failure the old ones go back.
  // The journal lets a restore cut off midway (a crash, a power cut) be finished by the next one.
  const replaced = ((await contents(dir)) ?? []).filter((name) => !/^\.(restoring|replaced)-/.test(name));
  const incoming = (await fs.readdir(staging)).sort();
  const movedAside: string[] = [];
  const movedIn: string[] = [];
  try {
    if (replaced.length) await fs.mkdir(aside, { mode: 0o700 });
    await writeJournal(dir, { id, replaced, incoming });
    for (const name of replaced) {
      await fs.rename(path.join(dir, name), path.join(aside, name));
      movedAside.push(name);
    }
    for (const name of incoming) {
      await fs.rename(path.join(staging, name), path.join(dir, name));
      movedIn.push(name);
    }
    await syncPath(dir);
    await removeJournal(dir);
  } catch (error) {
    for (const name of movedIn)
      await fs.rename(path.join(dir, name), path.join(staging, name)).catch(() => {});
    for (const name of movedAside)
      await fs.rename(path.join(aside, name), path.join(dir, name)).catch(() => {});
    await syncPath(dir).catch(() => {});
    await removeJournal(dir).catch(() => {});
    await fs.rm(staging, { recursive: true, force: true });
    await fs.rm(aside, { recursive: true, force: true });
    throw error;
  }
  await fs.rm(staging, { recursive: true, force: true });
  await fs.rm(aside, { recursive: true, force: true });
  return { manifest, dataDir: dir, replaced, recovered: null };
}
