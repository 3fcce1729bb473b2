import fs from "node:fs";
import path from "node:path";
import { CamelCasePlugin, Kysely, PostgresDialect, SqliteDialect, sql } from "kysely";
import pg from "pg";
import { migrateToLatest } from "./migrations.ts";
import type { DB } from "./schema.ts";
import { openSqlite } from "./sqlite-adapter.ts";
import { WriteBatcher } from "./write-batcher.ts";

type Dialect = "sqlite" | "postgres";

export interface Database {
  db: Kysely<DB>;
  /** Group commit for frequent small writes. */
  batcher: WriteBatcher;
  dialect: Dialect;
  /** Where the data lives, for logs: a file path or a host/database. */
  location: string;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  dataDir: string;
  databaseUrl: string | null;
  /** How long a SQLite write waits for a lock held by another process. */
  sqliteBusyTimeoutMs?: number;
  /** Rows queued for the group commit at most (see WriteBatcher.room). */
  writeQueueMaxRows?: number;
}

const INT8_OID = 20;

function postgresPool(url: string): pg.Pool {
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

/** Opens the database (SQLite under dataDir unless a PostgreSQL URL is given) and migrates it. */
export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  const plugins = [new CamelCasePlugin()];
  let db: Kysely<DB>;
  let dialect: Dialect;
  let location: string;
  if (options.databaseUrl) {
    const url = new URL(options.databaseUrl);
    db = new Kysely<DB>({
      dialect: new PostgresDialect({ pool: postgresPool(options.databaseUrl) }),
      plugins,
    });
    dialect = "postgres";
    location = `${url.hostname}:${url.port || 5432}${url.pathname}`;
  } else {
    fs.mkdirSync(options.dataDir, { recursive: true, mode: 0o700 });
    location = path.join(options.dataDir, "sdk.db");
    const sqlite = openSqlite(location, options.sqliteBusyTimeoutMs ?? 2_000);
    db = new Kysely<DB>({ dialect: new SqliteDialect({ database: sqlite }), plugins });
    dialect = "sqlite";
  }
  const batcher = new WriteBatcher(db, { maxQueued: options.writeQueueMaxRows });
  const database: Database = {
    db,
    batcher,
    dialect,
    location,
    close: async () => {
      await batcher.drain();
      await db.destroy();
    },
  };
  try {
    const schema =
      dialect === "postgres"
        ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(db)).rows[0]?.schema
        : undefined;
    await migrateToLatest(db as Kysely<unknown>, schema);
  } catch (error) {
    await database.close().catch(() => {});
    throw error;
  }
  return database;
}
