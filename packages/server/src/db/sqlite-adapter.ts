import fs from "node:fs";
import { DatabaseSync } from "node:sqlite";
import type { SqliteDatabase, SqliteStatement } from "kysely";

/**
 * Kysely's SqliteDialect expects a better-sqlite3-shaped object: `stmt.all(paramsArray)` and a
 * `stmt.reader` flag. node:sqlite spreads parameters and has `columns()`; this bridges the two.
 */
export function openSqlite(file: string, busyTimeoutMs: number): SqliteDatabase & { raw: DatabaseSync } {
  // The database holds password and token hashes: only the server's user may read it. SQLite gives
  // the -wal and -shm files the same mode as the database file.
  fs.closeSync(fs.openSync(file, "a", 0o600));
  fs.chmodSync(file, 0o600);
  const raw = new DatabaseSync(file, { timeout: busyTimeoutMs, enableForeignKeyConstraints: true });
  raw.exec("PRAGMA journal_mode = WAL");
  // FULL: a committed write survives a power cut, which small boards on SD cards do see.
  raw.exec("PRAGMA synchronous = FULL");
  return {
    raw,
    close: () => raw.close(),
    prepare(sql: string): SqliteStatement {
      const stmt = raw.prepare(sql);
      const params = (p: ReadonlyArray<unknown>) => p as Array<null | number | bigint | string | Uint8Array>;
      return {
        reader: stmt.columns().length > 0,
        all: (p) => stmt.all(...params(p)),
        run: (p) => stmt.run(...params(p)),
        iterate: (p) => stmt.iterate(...params(p)) as IterableIterator<unknown>,
      };
    },
  };
}
