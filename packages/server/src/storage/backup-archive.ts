import { createHash, randomBytes } from "node:crypto";
import { createReadStream, createWriteStream } from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";
import { pipeline, Readable } from "node:stream";
import { finished, pipeline as pipelineAsync } from "node:stream/promises";
import { createGunzip, createGzip } from "node:zlib";
import { syncPath } from "./fsync.ts";
import { ArchiveError, readTar, tarEnd, tarHeader, tarPadding } from "./tar.ts";

const backupFormat = "sdk-backup";
const backupFormatVersion = 1;
/** The SQLite database's file name in DATA_DIR and in an archive. */
const databaseFile = "sdk.db";
/** Scheduled backups, kept out of every archive. */
export const backupsDirName = "backups";

interface ManifestFile {
  path: string;
  size: number;
  sha256: string;
}

export interface BackupManifest {
  format: typeof backupFormat;
  formatVersion: number;
  serverVersion: string;
  createdAt: string;
  dialect: "sqlite" | "postgres";
  /** The database's file in the archive; `null` with PostgreSQL (back it up with pg_dump). */
  database: string | null;
  note?: string;
  files: ManifestFile[];
}

const postgresNote =
  "The database is PostgreSQL: it is not in this archive. Back it up with pg_dump (restore it with pg_restore or psql) alongside this archive.";

/**
 * Whether a path of DATA_DIR (relative, `/`-separated) stays out of an archive: scheduled backups,
 * the live database and its WAL (a snapshot goes in instead), temp files and half-written dirs.
 */
function excludedFromBackup(relative: string): boolean {
  const parts = relative.split("/");
  const top = parts[0]!;
  if (top === backupsDirName || top === "lost+found") return true;
  if (/^sdk\.db(-wal|-shm|-journal)?$/.test(top)) return true;
  if (/^\.(write-check|restoring|replaced)-/.test(top) || top === ".lock") return true;
  return parts.some((part) => part.endsWith(".tmp"));
}

/** Every regular file under `dir` that belongs in a backup, as relative `/`-separated paths, sorted. */
async function dataFiles(dir: string, prefix = ""): Promise<string[]> {
  const found: string[] = [];
  let entries: import("node:fs").Dirent[];
  try {
    entries = await fs.readdir(path.join(dir, prefix), { withFileTypes: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT" && prefix) return found; // removed meanwhile
    throw error;
  }
  for (const entry of entries) {
    const relative = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (excludedFromBackup(relative)) continue;
    if (entry.isDirectory()) found.push(...(await dataFiles(dir, relative)));
    else if (entry.isFile()) found.push(relative);
    else if (entry.isSymbolicLink()) {
      // A link to a file is followed (its bytes go in); anything else would silently be missing.
      const target = await fs.stat(path.join(dir, relative)).catch(() => undefined);
      if (!target?.isFile())
        throw new Error(
          `DATA_DIR holds a symbolic link a backup cannot follow: ${relative} (${target ? "to a directory" : "to nothing"}); replace it with what it points to`,
        );
      found.push(relative);
    }
  }
  return found.sort();
}

async function sha256(file: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest("hex");
}

/**
 * Files are linked (or copied) into the staging dir: deployments and firmware are written to a temp
 * name and renamed, so a link keeps the bytes the manifest's checksum was taken of.
 */
async function stageFile(from: string, to: string): Promise<boolean> {
  await fs.mkdir(path.dirname(to), { recursive: true, mode: 0o700 });
  try {
    if ((await fs.lstat(from)).isSymbolicLink()) throw new Error("a link: copy what it points to");
    await fs.link(from, to);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return false; // removed since it was listed (a deployment pruned)
    try {
      await fs.copyFile(from, to);
      return true;
    } catch (copyError) {
      if ((copyError as NodeJS.ErrnoException).code === "ENOENT") return false;
      throw copyError;
    }
  }
}

export interface PreparedBackup {
  manifest: BackupManifest;
  /** Total bytes of the files (before compression). */
  bytes: number;
  /** The archive (gzip-compressed tar, manifest.json first); the staging dir goes when it ends. */
  stream(): Readable;
  /** Removes the staging dir when the stream is not read. */
  discard(): Promise<void>;
}

export interface BackupSource {
  dataDir: string;
  dialect: "sqlite" | "postgres";
  serverVersion: string;
  now: Date;
  /** Writes a consistent copy of the SQLite database to `dest` (unused with PostgreSQL). */
  snapshotDatabase(dest: string): Promise<void>;
}

/**
 * Takes the snapshot (database, key, project files, firmware) into a staging dir under
 * DATA_DIR/backups/ and checksums it; the archive is streamed from there.
 */
export async function prepareBackup(source: BackupSource): Promise<PreparedBackup> {
  const staging = path.join(source.dataDir, backupsDirName, `.staging-${randomBytes(6).toString("hex")}`);
  await fs.mkdir(staging, { recursive: true, mode: 0o700 });
  const discard = () => fs.rm(staging, { recursive: true, force: true });
  try {
    const paths: string[] = [];
    if (source.dialect === "sqlite") {
      await source.snapshotDatabase(path.join(staging, databaseFile));
      paths.push(databaseFile);
    }
    for (const relative of await dataFiles(source.dataDir)) {
      if (await stageFile(path.join(source.dataDir, relative), path.join(staging, relative)))
        paths.push(relative);
    }
    const files: ManifestFile[] = [];
    for (const relative of paths) {
      const file = path.join(staging, relative);
      files.push({ path: relative, size: (await fs.stat(file)).size, sha256: await sha256(file) });
    }
    const manifest: BackupManifest = {
      format: backupFormat,
      formatVersion: backupFormatVersion,
      serverVersion: source.serverVersion,
      createdAt: source.now.toISOString(),
      dialect: source.dialect,
      database: source.dialect === "sqlite" ? databaseFile : null,
      ...(source.dialect === "postgres" ? { note: postgresNote } : {}),
      files,
    };
    let streamed = false;
    return {
      manifest,
      bytes: files.reduce((sum, f) => sum + f.size, 0),
      stream() {
        if (streamed) throw new Error("a prepared backup streams once");
        streamed = true;
        const mtime = source.now.getTime() / 1000;
        async function* tar() {
          try {
            const json = Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`);
            yield tarHeader("manifest.json", json.length, mtime);
            yield json;
            yield tarPadding(json.length);
            for (const file of files) {
              yield tarHeader(file.path, file.size, mtime);
              let sent = 0;
              for await (const chunk of createReadStream(path.join(staging, file.path))) {
                sent += (chunk as Buffer).length;
                yield chunk as Buffer;
              }
              if (sent !== file.size) throw new Error(`${file.path} changed size while being archived`);
              yield tarPadding(file.size);
            }
            yield tarEnd;
          } finally {
            await discard();
          }
        }
        const gzip = createGzip();
        pipeline(Readable.from(tar()), gzip, () => {}); // an error destroys gzip: the reader sees it
        return gzip;
      },
      discard,
    };
  } catch (error) {
    await discard();
    throw error;
  }
}

/**
 * Writes an archive to `file` atomically: a temp file beside it, flushed, renamed once complete and
 * the directory flushed. On a failure every stream is destroyed, so the staged copy of the database
 * is closed (its space freed) and the staging dir removed.
 */
export async function writeArchive(prepared: PreparedBackup, file: string): Promise<number> {
  const temp = `${file}.tmp`;
  try {
    await pipelineAsync(prepared.stream(), createWriteStream(temp, { mode: 0o600 }));
    await syncPath(temp);
    await fs.rename(temp, file);
    await syncPath(path.dirname(file));
    return (await fs.stat(file)).size;
  } catch (error) {
    await prepared.discard();
    await fs.rm(temp, { force: true });
    throw error;
  }
}

function validManifest(value: unknown): value is BackupManifest {
  const m = value as BackupManifest;
  return (
    typeof m === "object" &&
    m !== null &&
    m.format === backupFormat &&
    typeof m.formatVersion === "number" &&
    (m.dialect === "sqlite" || m.dialect === "postgres") &&
    Array.isArray(m.files) &&
    m.files.every(
      (f) =>
        typeof f?.path === "string" &&
        Number.isSafeInteger(f.size) &&
        typeof f.sha256 === "string" &&
        /^[0-9a-f]{64}$/.test(f.sha256),
    )
  );
}

/** A path from an archive that stays inside the directory it is restored to. */
function safePath(relative: string): boolean {
  if (!relative || relative.startsWith("/") || relative.includes("\\") || relative.includes("\0"))
    return false;
  return relative.split("/").every((part) => part !== "" && part !== "." && part !== "..");
}

/**
 * Reads an archive from end to end, checking the manifest (first entry), every file's size and
 * SHA-256 against it and that no file is missing or extra. With `extractTo`, files are written
 * under that directory as they are read (the caller removes it when this throws). Throws
 * `ArchiveError` saying what is wrong.
 */
export async function readArchive(file: string, extractTo?: string): Promise<BackupManifest> {
  let manifest: BackupManifest | undefined;
  let manifestBytes: Buffer[] | undefined;
  const seen = new Set<string>();
  const byPath = new Map<string, ManifestFile>();
  let current: { expected: ManifestFile; hash: ReturnType<typeof createHash>; size: number } | undefined;
  let out: import("node:fs").WriteStream | undefined;
  // pipeline, not pipe: a read error (a permission, an I/O error) reaches the reader below.
  const source = createGunzip();
  let readError: NodeJS.ErrnoException | undefined;
  const input = createReadStream(file).once("error", (error) => {
    readError = error;
  });
  pipeline(input, source, () => {});
  try {
    await readTar(source, {
      async onEntry(entry) {
        if (!manifest) {
          if (entry.path !== "manifest.json" || manifestBytes)
            throw new ArchiveError("this is not an sdk backup (it does not begin with manifest.json)");
          if (entry.size > 64 * 1024 * 1024) throw new ArchiveError("the archive's manifest is too large");
          manifestBytes = [];
          return;
        }
        const expected = byPath.get(entry.path);
        if (!expected)
          throw new ArchiveError(
            `the archive is corrupted: it holds ${entry.path}, which its manifest does not list`,
          );
        if (seen.has(entry.path))
          throw new ArchiveError(`the archive is corrupted: it holds ${entry.path} twice`);
        if (entry.size !== expected.size)
          throw new ArchiveError(
            `the archive is corrupted: ${entry.path} is ${entry.size} bytes in it but ${expected.size} in its manifest`,
          );
        seen.add(entry.path);
        current = { expected, hash: createHash("sha256"), size: 0 };
        if (extractTo) {
          const target = path.join(extractTo, entry.path);
          await fs.mkdir(path.dirname(target), { recursive: true, mode: 0o700 });
          out = createWriteStream(target, { mode: 0o600, flush: true }); // fsynced as it closes
        }
      },
      async onData(chunk) {
        if (!manifest) {
          manifestBytes!.push(Buffer.from(chunk));
          return;
        }
        current!.hash.update(chunk);
        current!.size += chunk.length;
        if (out && !out.write(chunk))
          await new Promise<void>((resolve) => out!.once("drain", () => resolve()));
      },
      async onEnd() {
        if (!manifest) {
          let parsed: unknown;
          try {
            parsed = JSON.parse(Buffer.concat(manifestBytes!).toString("utf8"));
          } catch {
            throw new ArchiveError("the archive is corrupted (its manifest.json is not valid JSON)");
          }
          if (!validManifest(parsed))
            throw new ArchiveError("the archive's manifest.json is not an sdk backup manifest");
          if (parsed.formatVersion > backupFormatVersion)
            throw new ArchiveError(
              `the archive is format version ${parsed.formatVersion}, newer than this server reads (${backupFormatVersion}): restore it with a newer sdk-server`,
            );
          const bad = parsed.files.find(
            (f) =>
              !safePath(f.path) ||
              f.path === "manifest.json" ||
              (f.path !== databaseFile && excludedFromBackup(f.path)) ||
              /^\.(lock|restore-journal)/.test(f.path),
          );
          if (bad) throw new ArchiveError(`the archive's manifest names an unsafe path: ${bad.path}`);
          manifest = parsed;
          for (const f of parsed.files) byPath.set(f.path, f);
          return;
        }
        const { expected, hash } = current!;
        current = undefined;
        if (out) {
          const stream = out;
          out = undefined;
          stream.end();
          await finished(stream);
        }
        if (hash.digest("hex") !== expected.sha256)
          throw new ArchiveError(
            `${expected.path} does not match its SHA-256 in the manifest: the archive is corrupted`,
          );
      },
    });
  } catch (error) {
    out?.destroy();
    source.destroy();
    input.destroy();
    if (readError) {
      const hint =
        readError.code === "EACCES" || readError.code === "EPERM"
          ? ` (it is not readable by ${typeof process.getuid === "function" ? `user ${process.getuid()}` : "this user"}: chmod 644 it, or run the restore as its owner)`
          : "";
      throw new ArchiveError(`the archive cannot be read: ${readError.message}${hint}`);
    }
    if (error instanceof ArchiveError) throw error;
    if ((error as Error).message?.includes("unexpected end of file"))
      throw new ArchiveError("the archive is truncated (it ends before its last file)");
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "Z_DATA_ERROR" || code === "Z_BUF_ERROR" || code === "Z_NEED_DICT")
      throw new ArchiveError(`the archive is corrupted or not gzip-compressed (${(error as Error).message})`);
    throw error;
  }
  if (!manifest) throw new ArchiveError("this is not an sdk backup (it holds no manifest.json)");
  const missing = manifest.files.find((f) => !seen.has(f.path));
  if (missing)
    throw new ArchiveError(`the archive is incomplete: it lacks ${missing.path}, which its manifest lists`);
  return manifest;
}
