import fs from "node:fs";
import path from "node:path";
import { CamelCasePlugin, Kysely, PostgresDialect, SqliteDialect, sql } from "kysely";
import pg from "pg";
import { migrateToLatest } from "./migrations.ts";
import type { DB } from "./schema.ts";
import { openSqlite } from "./sqlite-adapter.ts";

export type Dialect = "sqlite" | "postgres";

export interface Database {
  db: Kysely<DB>;
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
  let database: Database;
  if (options.databaseUrl) {
    const pool = postgresPool(options.databaseUrl);
    const url = new URL(options.databaseUrl);
    database = {
      db: new Kysely<DB>({ dialect: new PostgresDialect({ pool }), plugins }),
      dialect: "postgres",
      location: `${url.hostname}:${url.port || 5432}${url.pathname}`,
      close: async () => database.db.destroy(),
    };
  } else {
    fs.mkdirSync(options.dataDir, { recursive: true, mode: 0o700 });
    const file = path.join(options.dataDir, "sdk.db");
    const sqlite = openSqlite(file, options.sqliteBusyTimeoutMs ?? 2_000);
    database = {
      db: new Kysely<DB>({ dialect: new SqliteDialect({ database: sqlite }), plugins }),
      dialect: "sqlite",
      location: file,
      close: async () => database.db.destroy(),
    };
  }
  try {
    const schema =
      database.dialect === "postgres"
        ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(database.db)).rows[0]
            ?.schema
        : undefined;
    await migrateToLatest(database.db as Kysely<unknown>, schema);
  } catch (error) {
    await database.close().catch(() => {});
    throw error;
  }
  return database;
}
