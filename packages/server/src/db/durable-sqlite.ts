import fs from "node:fs/promises";
import {
  type DatabaseConnection,
  type DialectAdapter,
  type Driver,
  SqliteAdapter,
  SqliteDialect,
  type SqliteDialectConfig,
  type TransactionSettings,
} from "kysely";

/**
 * Commits made durable off the main thread. SQLite runs with `synchronous = NORMAL`: a commit
 * writes the WAL without waiting for the disk. Before the caller of a write hears that it is done,
 * the WAL is flushed with `fdatasync` on libuv's thread pool, one flush shared by every commit made
 * before it started. A write is therefore as safe from a power cut when its promise settles as
 * with `synchronous = FULL`, but the event loop no longer stops for the disk at each commit: after a
 * restart it answers thousands of reconnecting boards meanwhile.
 */
export interface DurableSqlite {
  /** True once if a write was committed since the last call (and clears it). */
  takeUnsynced(): boolean;
}

/** The flush: `fdatasync` of the WAL file (of the database file while there is no WAL). */
export function walFlush(databaseFile: string): () => Promise<void> {
  const syncFile = async (file: string) => {
    const handle = await fs.open(file, "r");
    try {
      await handle.datasync();
    } finally {
      await handle.close();
    }
  };
  return async () => {
    try {
      await syncFile(`${databaseFile}-wal`);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
      await syncFile(databaseFile);
    }
  };
}

/**
 * Shares flushes: a caller gets the flush that starts after its call. While one runs, every
 * caller that arrives meanwhile waits for the single next one.
 */
export function groupFlush(flush: () => Promise<void>): () => Promise<void> {
  let running: Promise<void> | null = null;
  let next: Promise<void> | null = null;
  const start = (): Promise<void> => {
    const current = flush().finally(() => {
      if (running === current) running = null;
    });
    running = current;
    return current;
  };
  return () => {
    if (!running) return start();
    next ??= running
      .catch(() => {})
      .then(() => {
        next = null;
        return start();
      });
    return next;
  };
}

/** One caller at a time on the single connection (Kysely's own lock would be held during the flush). */
class ConnectionLock {
  #held: Promise<void> | null = null;
  #release: (() => void) | null = null;

  async obtain(): Promise<void> {
    while (this.#held) await this.#held;
    this.#held = new Promise((resolve) => {
      this.#release = resolve;
    });
  }

  release(): void {
    const release = this.#release;
    this.#held = null;
    this.#release = null;
    release?.();
  }
}

/**
 * The SQLite driver, but a caller that committed a write gets its connection back only once the
 * write is flushed to disk, after the connection was handed on: the next caller does not wait for
 * the disk.
 */
class DurableDriver implements Driver {
  readonly #inner: Driver;
  readonly #database: DurableSqlite;
  readonly #flush: () => Promise<void>;
  readonly #lock = new ConnectionLock();

  constructor(inner: Driver, database: DurableSqlite, flush: () => Promise<void>) {
    this.#inner = inner;
    this.#database = database;
    this.#flush = flush;
  }

  init(): Promise<void> {
    return this.#inner.init();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    await this.#lock.obtain();
    return this.#inner.acquireConnection();
  }

  beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    return this.#inner.beginTransaction(connection, settings);
  }

  commitTransaction(connection: DatabaseConnection): Promise<void> {
    return this.#inner.commitTransaction(connection);
  }

  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    return this.#inner.rollbackTransaction(connection);
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    try {
      await this.#inner.releaseConnection(connection);
    } finally {
      const unsynced = this.#database.takeUnsynced();
      this.#lock.release();
      if (unsynced) await this.#flush();
    }
  }

  destroy(): Promise<void> {
    return this.#inner.destroy();
  }
}

/** Kysely's SQLite dialect with durable commits (see DurableSqlite). */
export class DurableSqliteDialect extends SqliteDialect {
  readonly #database: DurableSqlite;
  readonly #flush: () => Promise<void>;

  constructor(config: SqliteDialectConfig & { database: DurableSqlite }, flush: () => Promise<void>) {
    super(config);
    this.#database = config.database;
    this.#flush = groupFlush(flush);
  }

  override createAdapter(): DialectAdapter {
    // The driver holds the connection's lock itself (Kysely's would stay held during the flush).
    return new (class extends SqliteAdapter {
      override get supportsMultipleConnections(): boolean {
        return true;
      }
    })();
  }

  override createDriver(): Driver {
    return new DurableDriver(super.createDriver(), this.#database, this.#flush);
  }
}
