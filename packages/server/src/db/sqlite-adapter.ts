import fs from "node:fs";
import { DatabaseSync } from "node:sqlite";
import type { SqliteDatabase, SqliteStatement } from "kysely";

/**
 * Kysely's SqliteDialect expects a better-sqlite3-shaped object: `stmt.all(paramsArray)` and a
 * `stmt.reader` flag. node:sqlite spreads parameters and has `columns()`; this bridges the two.
 */
/** SQLITE_IOERR_SHMSIZE: the -shm file could not be grown (no space left). */
const sqliteIoErrShmSize = 4874;

export function openSqlite(
  file: string,
  busyTimeoutMs: number,
): SqliteDatabase & {
  raw: DatabaseSync;
  /** Opened in exclusive locking mode (a full disk): no other connection can open the file. */
  exclusive: boolean;
} {
  // The database holds password and token hashes: only the server's user may read it. SQLite gives
  // the -wal and -shm files the same mode as the database file.
  fs.closeSync(fs.openSync(file, "a", 0o600));
  fs.chmodSync(file, 0o600);
  const open = () => new DatabaseSync(file, { timeout: busyTimeoutMs, enableForeignKeyConstraints: true });
  let raw = open();
  let exclusive = false;
  try {
    raw.exec("PRAGMA journal_mode = WAL");
  } catch (error) {
    if ((error as { errcode?: number }).errcode !== sqliteIoErrShmSize) throw error;
    // A full disk leaves no room for WAL's shared-memory index (-shm). In exclusive locking mode
    // SQLite keeps it in this process's memory instead, so the server starts and writes fail (/ready
    // answers 503) until space is freed; other processes cannot open the database until a restart.
    raw.close();
    raw = open();
    raw.exec("PRAGMA locking_mode = EXCLUSIVE");
    exclusive = true;
    raw.exec("PRAGMA journal_mode = WAL");
  }
  // FULL: a committed write survives a power cut, which small boards on SD cards do see.
  raw.exec("PRAGMA synchronous = FULL");
  const params = (p: ReadonlyArray<unknown>) => p as Array<null | number | bigint | string | Uint8Array>;
  // Kysely prepares every query anew; parsing SQL again each time was ~10% of a busy server's time.
  // Statements run synchronously, so one prepared statement per SQL text can be reused.
  const cache = new Map<string, SqliteStatement>();
  const maxCached = 500;
  return {
    raw,
    exclusive,
    close: () => {
      cache.clear();
      raw.close();
    },
    prepare(query: string): SqliteStatement {
      // Kysely begins its transactions with a plain `begin`, which takes the write lock only at the
      // first write; had the writer thread (sqlite-writer.ts) committed since the transaction's
      // first read, that write would fail at once (SQLITE_BUSY_SNAPSHOT) instead of waiting.
      const sql = query === "begin" ? "begin immediate" : query;
      const cached = cache.get(sql);
      if (cached) return cached;
      const stmt = raw.prepare(sql);
      const prepared: SqliteStatement = {
        reader: stmt.columns().length > 0,
        all: (p) => stmt.all(...params(p)),
        run: (p) => stmt.run(...params(p)),
        // An open iterator would be reset by a reuse: iterate on a statement of its own.
        iterate: (p) => raw.prepare(sql).iterate(...params(p)) as IterableIterator<unknown>,
      };
      if (cache.size >= maxCached) cache.delete(cache.keys().next().value!);
      cache.set(sql, prepared);
      return prepared;
    },
  };
}
