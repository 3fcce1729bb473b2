import fs from "node:fs/promises";
import path from "node:path";
import type { Readable } from "node:stream";
import type { Database } from "../db/database.ts";
import { snapshotSqlite } from "../db/sqlite-snapshot.ts";
import { AppError } from "../errors.ts";
import type { EventBus } from "../events/bus.ts";
import type { Clock } from "../lib/clock.ts";
import {
  type BackupManifest,
  backupsDirName,
  prepareBackup,
  writeArchive,
} from "../storage/backup-archive.ts";
import { freeBytes } from "../storage/disk-space.ts";
import type { Principal } from "./auth.ts";

/** `sdk-backup-2026-11-24T02-57-14-123Z.tar.gz`: sorts by time, safe in every filesystem. */
function backupFilename(at: Date): string {
  return `sdk-backup-${at.toISOString().replace(/[:.]/g, "-")}.tar.gz`;
}

/** Scheduled archives in DATA_DIR/backups/ (the ones retention counts). */
const scheduledBackup = /^sdk-backup-[0-9TZ-]+\.tar\.gz$/;

const mib = 1024 * 1024;
/** Room kept free beyond what a backup needs: the server goes on writing while it is taken. */
const freeSpaceMargin = (databaseBytes: number) => Math.max(64 * mib, Math.ceil(databaseBytes / 10));

export interface DownloadedBackup {
  filename: string;
  manifest: BackupManifest;
  bytes: number;
  stream: Readable;
}

export function backupsService(deps: {
  dataDir: string;
  database: Database;
  bus: EventBus;
  clock: Clock;
  version: string;
}) {
  const { dataDir, database, bus, clock, version } = deps;
  const dir = path.join(dataDir, backupsDirName);
  const prepare = (now: Date) =>
    prepareBackup({
      dataDir,
      dialect: database.dialect,
      serverVersion: version,
      now,
      snapshotDatabase: (dest) => snapshotSqlite(database.location, dest),
    });
  let busy = false;
  /**
   * One backup at a time, and only with room for it: the staged database copy (and, when written
   * into backups/, the archive, at most as large again) plus a margin.
   */
  async function begin(withArchive: boolean): Promise<() => void> {
    if (busy)
      throw new AppError(
        "backup_in_progress",
        "A backup is already being taken: try again once it has finished",
      );
    busy = true;
    try {
      const databaseBytes =
        database.dialect === "sqlite"
          ? await fs.stat(database.location).then(
              (s) => s.size,
              () => 0,
            )
          : 0;
      const needed = databaseBytes * (withArchive ? 2 : 1) + freeSpaceMargin(databaseBytes);
      const free = await freeBytes(dataDir);
      if (free !== null && free < needed)
        throw new AppError(
          "insufficient_storage",
          `Not enough free space in ${dataDir} for a backup: ${(free / mib).toFixed(1)} MB free, ${(needed / mib).toFixed(1)} MB needed (the database is ${(databaseBytes / mib).toFixed(1)} MB); free some space and try again`,
        );
    } catch (error) {
      busy = false;
      throw error;
    }
    let done = false;
    return () => {
      if (!done) busy = false;
      done = true;
    };
  }
  return {
    dir,
    /** The archive of the whole server as a stream (admins only: the route checks the role). */
    async download(principal: Principal): Promise<DownloadedBackup> {
      const end = await begin(false);
      try {
        const now = new Date(clock.now());
        const prepared = await prepare(now);
        try {
          await bus.publish("backup.downloaded", {
            actorId: principal.user.id,
            files: prepared.manifest.files.length,
            bytes: prepared.bytes,
          });
        } catch (error) {
          await prepared.discard();
          throw error;
        }
        const stream = prepared.stream();
        stream.once("close", end); // read to the end, failed or cut off by the client
        return {
          filename: backupFilename(now),
          manifest: prepared.manifest,
          bytes: prepared.bytes,
          stream,
        };
      } catch (error) {
        end();
        throw error;
      }
    },
    /** Writes an archive into DATA_DIR/backups/ (temp file, then renamed). */
    async writeScheduled(): Promise<{ file: string; size: number; manifest: BackupManifest }> {
      const end = await begin(true);
      try {
        const now = new Date(clock.now());
        await fs.mkdir(dir, { recursive: true, mode: 0o700 });
        const prepared = await prepare(now);
        const file = path.join(dir, backupFilename(now));
        const size = await writeArchive(prepared, file);
        return { file, size, manifest: prepared.manifest };
      } finally {
        end();
      }
    },
    /** Scheduled archives, oldest first. */
    async list(): Promise<Array<{ name: string; mtimeMs: number }>> {
      let names: string[];
      try {
        names = await fs.readdir(dir);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
        throw error;
      }
      const found = [];
      for (const name of names.filter((n) => scheduledBackup.test(n))) {
        const stat = await fs.stat(path.join(dir, name)).catch(() => undefined);
        if (stat) found.push({ name, mtimeMs: stat.mtimeMs });
      }
      // By when they were written, not by name: a copied-in or renamed archive keeps its place.
      return found.sort((a, b) => a.mtimeMs - b.mtimeMs || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    },
    /** Keeps the newest `keep` scheduled archives; returns the names removed. */
    async prune(keep: number): Promise<string[]> {
      const all = await this.list();
      const removed = all.slice(0, Math.max(0, all.length - keep)).map((b) => b.name);
      for (const name of removed) await fs.rm(path.join(dir, name), { force: true });
      return removed;
    },
    /** Leftovers of a backup cut off by a crash: temp archives and staging dirs. */
    async removeLeftovers(): Promise<void> {
      const names = await fs.readdir(dir).catch(() => [] as string[]);
      for (const name of names)
        if (name.startsWith(".staging-") || name.endsWith(".tar.gz.tmp"))
          await fs.rm(path.join(dir, name), { recursive: true, force: true });
    },
  };
}
export type BackupsService = ReturnType<typeof backupsService>;
