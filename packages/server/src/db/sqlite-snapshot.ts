import { backup, DatabaseSync } from "node:sqlite";

/**
 * Copies a live SQLite database to `dest` as one consistent snapshot while the server keeps
 * writing: a second, read-only connection runs SQLite's online backup in a single step (on Node's
 * thread pool, not the event loop) inside one read transaction of the WAL, so the copy holds every
 * transaction committed before it began and none after. Writers are not blocked.
 */
export async function snapshotSqlite(file: string, dest: string): Promise<void> {
  const source = new DatabaseSync(file, { readOnly: true, timeout: 10_000 });
  try {
    await backup(source, dest, { rate: 2 ** 31 - 1 });
  } finally {
    source.close();
  }
}
