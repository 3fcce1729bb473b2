import fs from "node:fs";
import path from "node:path";
import type { DatabaseSync } from "node:sqlite";
import { CamelCasePlugin, Kysely, PostgresDialect, SqliteDialect, sql } from "kysely";
import type pg from "pg";
import { diskSyncMs } from "./disk-sync.ts";
import { migrateToLatest, slowPendingMigrations } from "./migrations.ts";
import type { DB } from "./schema.ts";
import { openSqlite } from "./sqlite-adapter.ts";
import { SqliteWriter } from "./sqlite-writer.ts";
import type { WriterOptions } from "./sqlite-writer-messages.ts";
import { type Committer, kyselyCommitter, WriteBatcher } from "./write-batcher.ts";

type Dialect = "sqlite" | "postgres";

export interface Database {
  db: Kysely<DB>;
  /** Group commit for frequent small writes. */
  batcher: WriteBatcher;
  /** What the batcher commits through: SQLite's writer thread (sqlite-writer.ts), or `db`. */
  committer: Committer;
  /**
   * SQLite: whether the group commit runs in the writer thread, and the disk's sync time that
   * `commitThread: "auto"` chose by (null when not measured). PostgreSQL: not in a thread.
   */
  commits: { readonly thread: boolean; readonly diskSyncMs: number | null };
  dialect: Dialect;
  /** Where the data lives, for logs: a file path or a host/database. */
  location: string;
  /**
   * SQLite: hands up to `pages` free pages back to the filesystem (incremental vacuum), so the
   * file shrinks after deletes. PostgreSQL: nothing (autovacuum makes the space reusable).
   */
  reclaimSpace(pages: number): Promise<void>;
  /**
   * SQLite: copies the write-ahead log into the file and truncates it to zero bytes, so space
   * freed by a sweep leaves the WAL too. PostgreSQL: nothing.
   */
  checkpoint(): Promise<void>;
  /** SQLite: the write-ahead log's size (`sdk.db-wal`); PostgreSQL: 0. */
  walBytes(): number;
  /** Something the operator should know about the database file, found while opening it. */
  notice?: string;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  dataDir: string;
  databaseUrl: string | null;
  /** How long a SQLite write waits for a lock held by another process. */
  sqliteBusyTimeoutMs?: number;
  /**
   * SQLite: where the group commit runs. `on`: a writer thread of its own; `off`: the main
   * thread; `auto` (default): the thread when the data directory's disk is slow to sync.
   */
  commitThread?: CommitThreadMode;
  /** Rows queued for the group commit at most (see WriteBatcher.room). */
  writeQueueMaxRows?: number;
  /** Told before a step that may take long on a big database (a migration that builds an index). */
  onSlowStep?: (message: string) => void;
}

type CommitThreadMode = "auto" | "on" | "off";

/**
 * From this sync time (ms) on, `auto` commits in the writer thread. On a disk that syncs in 0.1–0.3
 * ms (an SSD) the commit is mostly CPU, and handing it to a thread costs more than it frees; on a
 * slow one (an SD card) the main thread would wait for the disk at every commit. bench/README has
 * the figures.
 */
const slowDiskSyncMs = 2;

/** A SQLite file from this size on makes a pending index-building migration worth a notice. */
const slowMigrationNoticeBytes = 64 * 1024 * 1024;

const INT8_OID = 20;

/** An existing database up to this size switches to incremental auto-vacuum at boot (one VACUUM). */
const vacuumAtBootMaxBytes = 64 * 1024 * 1024;
/** A WAL that grew past this during a burst is truncated back to it after each checkpoint. */
const journalSizeLimitBytes = 64 * 1024 * 1024;
/**
 * How long the writer thread's commit waits for the main connection's write lock (a project's
 * delete can hold it for seconds). It blocks no socket while it waits, and a commit given up would
 * lose the device rows queued in it.
 */
const writerBusyTimeoutMs = 60_000;

/** Free bytes of the filesystem holding `dir` for an unprivileged process, `null` if unknown. */
function freeBytesSync(dir: string): number | null {
  try {
    const stats = fs.statfsSync(dir);
    return stats.bavail * stats.bsize;
  } catch {
    return null;
  }
}

/**
 * Incremental auto-vacuum: the sweeper's `PRAGMA incremental_vacuum` hands freed pages back to
 * the filesystem, so the file shrinks instead of only ever growing. A new database gets it before
 * its first table; an existing one needs a full VACUUM (a rewrite: time, and free space of about
 * twice the file: the rewritten copy plus the write-ahead log that carries it back), done here when
 * the file is small and the disk has room, otherwise left to the operator (the returned notice).
 */
function useIncrementalVacuum(raw: DatabaseSync, dataDir: string): string | undefined {
  const mode = () => Number((raw.prepare("PRAGMA auto_vacuum").get() as { auto_vacuum: number }).auto_vacuum);
  if (mode() === 2) return undefined;
  raw.exec("PRAGMA auto_vacuum = INCREMENTAL");
  if (mode() === 2) return undefined; // a new, empty database
  const pages = raw.prepare("PRAGMA page_count").get() as { page_count: number };
  const size = raw.prepare("PRAGMA page_size").get() as { page_size: number };
  const bytes = Number(pages.page_count) * Number(size.page_size);
  const how =
    "stop the server and run `sqlite3 DATA_DIR/sdk.db 'PRAGMA auto_vacuum = INCREMENTAL; VACUUM;'` on the host";
  const mb = (n: number) => `${Math.round(n / 1048576)} MB`;
  if (bytes > vacuumAtBootMaxBytes)
    return `The database (${mb(bytes)}) does not give freed space back to the disk: ${how} once (it needs free space of twice its size)`;
  const free = freeBytesSync(dataDir);
  if (free !== null && free < 2 * bytes)
    return `The database (${mb(bytes)}) does not give freed space back to the disk, and switching it needs ${mb(2 * bytes)} free in DATA_DIR (${mb(free)} now): skipped at this start; free some space and restart, or ${how} once`;
  try {
    raw.exec("VACUUM");
    raw.exec("PRAGMA wal_checkpoint(TRUNCATE)"); // the rewrite went through the WAL: give it back
    return undefined;
  } catch (error) {
    return `Switching the database to incremental vacuum failed (${(error as Error).message}): ${how} once`;
  }
}

/** `pg` is loaded only for PostgreSQL: a server on SQLite boots without it. */
async function postgresPool(url: string): Promise<pg.Pool> {
  const { default: pg } = await import("pg");
  return new pg.Pool({
    connectionString: url,
    max: 10,
    connectionTimeoutMillis: 5_000,
    // bigint columns hold millisecond timestamps, which fit in a double.
    types: {
      getTypeParser: ((oid: number, format?: "text" | "binary") =>
        oid === INT8_OID
          ? (v: string) => Number(v)
          : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
    },
  });
}

/**
 * The connection's current schema: the first query, so a database that cannot be reached is named
 * here (`location`: host, port and database of DATABASE_URL, never its credentials).
 */
async function currentSchema(db: Kysely<DB>, location: string): Promise<string | undefined> {
  try {
    return (await sql<{ schema: string }>`select current_schema() as schema`.execute(db)).rows[0]?.schema;
  } catch (error) {
    throw new Error(
      `cannot connect to PostgreSQL at ${location} (DATABASE_URL): ${(error as Error).message}`,
      { cause: error },
    );
  }
}

/** Opens the database (SQLite under dataDir unless a PostgreSQL URL is given) and migrates it. */
export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  const plugins = [new CamelCasePlugin()];
  let db: Kysely<DB>;
  let dialect: Dialect;
  let location: string;
  let notice: string | undefined;
  let reclaimSpace = async (_pages: number) => {};
  let checkpoint = async () => {};
  let walBytes = () => 0;
  /** SQLite with the commit in its thread: what the thread opens, once the migrations are done. */
  let writerOptions: WriterOptions | null = null;
  let writer: SqliteWriter | null = null;
  let measuredSyncMs: number | null = null;
  if (options.databaseUrl) {
    const url = new URL(options.databaseUrl);
    db = new Kysely<DB>({
      dialect: new PostgresDialect({ pool: await postgresPool(options.databaseUrl) }),
      plugins,
    });
    dialect = "postgres";
    location = `${url.hostname}:${url.port || 5432}${url.pathname}`;
  } else {
    fs.mkdirSync(options.dataDir, { recursive: true, mode: 0o700 });
    location = path.join(options.dataDir, "sdk.db");
    const sqlite = openSqlite(location, options.sqliteBusyTimeoutMs ?? 2_000);
    sqlite.raw.exec(`PRAGMA journal_size_limit = ${journalSizeLimitBytes}`);
    notice = useIncrementalVacuum(sqlite.raw, options.dataDir);
    // A multi-row statement inside a transaction (the group commit's inserts and presence updates)
    // keeps a copy of each page it changes, to undo the statement alone; past 64 KB SQLite writes
    // those copies to a temporary file, a system call per page. In memory they cost a copy. Set
    // after the VACUUM above, whose rewritten copy of the database must not be held in memory.
    sqlite.raw.exec("PRAGMA temp_store = MEMORY");
    db = new Kysely<DB>({ dialect: new SqliteDialect({ database: sqlite }), plugins });
    const kysely = db;
    // On the connection Kysely hands out one at a time, so never inside another caller's
    // transaction; exec, because a prepared statement's single step frees only one page.
    reclaimSpace = (pages) =>
      kysely.connection().execute(async () => {
        sqlite.raw.exec(`PRAGMA incremental_vacuum(${Math.max(0, Math.floor(pages))})`);
      });
    checkpoint = () =>
      kysely.connection().execute(async () => {
        sqlite.raw.exec("PRAGMA wal_checkpoint(TRUNCATE)");
      });
    const wal = `${location}-wal`;
    walBytes = () => {
      try {
        return fs.statSync(wal).size;
      } catch {
        return 0;
      }
    };
    dialect = "sqlite";
    const mode = options.commitThread ?? "auto";
    if (mode === "auto") measuredSyncMs = diskSyncMs(options.dataDir);
    const inThread =
      mode === "on" || (mode === "auto" && measuredSyncMs !== null && measuredSyncMs >= slowDiskSyncMs);
    if (inThread && !sqlite.exclusive)
      writerOptions = {
        file: location,
        busyTimeoutMs: Math.max(options.sqliteBusyTimeoutMs ?? 0, writerBusyTimeoutMs),
        journalSizeLimitBytes,
      };
  }
  const onConnection = kyselyCommitter(db);
  const committer: Committer = {
    commit: (txs) => (writer ?? onConnection).commit(txs),
    // Not once the thread has stopped: its commits then go through `onConnection`.
    get offLoop() {
      return writer?.offLoop ?? false;
    },
  };
  const commits: Database["commits"] = {
    get thread() {
      return committer.offLoop === true;
    },
    diskSyncMs: measuredSyncMs,
  };
  const batcher = new WriteBatcher(committer, { maxQueued: options.writeQueueMaxRows });
  const database: Database = {
    db,
    batcher,
    committer,
    commits,
    dialect,
    location,
    reclaimSpace: (pages) => reclaimSpace(pages),
    checkpoint: () => checkpoint(),
    walBytes: () => walBytes(),
    ...(notice ? { notice } : {}),
    close: async () => {
      await batcher.drain();
      await writer?.close();
      await db.destroy();
    },
  };
  try {
    const schema = dialect === "postgres" ? await currentSchema(db, location) : undefined;
    const big = dialect === "sqlite" && fs.statSync(location).size >= slowMigrationNoticeBytes;
    const slow = big && options.onSlowStep ? await slowPendingMigrations(db as Kysely<unknown>, schema) : [];
    if (slow.length > 0)
      options.onSlowStep?.(
        `Upgrading the database (${Math.round(fs.statSync(location).size / 1048576)} MB): ${slow.join(", ")}; this may take a while, the server starts once it is done`,
      );
    await migrateToLatest(db as Kysely<unknown>, schema);
    // After the migrations: the thread's connection opens the schema they left.
    if (writerOptions) writer = await SqliteWriter.start(writerOptions, onConnection);
  } catch (error) {
    await database.close().catch(() => {});
    throw error;
  }
  return database;
}
