import { type Kysely, PostgresAdapter, type RawBuilder, sql } from "kysely";

/**
 * The database server's clock, in milliseconds since the epoch, as an SQL expression: the one clock
 * every instance of a cluster shares (their own may differ), for leases and claims that another
 * instance compares. PostgreSQL: the transaction's start (now()); SQLite: the statement's.
 */
// biome-ignore lint/suspicious/noExplicitAny: any database's Kysely
export function databaseNow(db: Kysely<any>): RawBuilder<number> {
  return db.getExecutor().adapter instanceof PostgresAdapter
    ? sql<number>`(extract(epoch from now()) * 1000)::bigint`
    : sql<number>`cast((julianday('now') - 2440587.5) * 86400000 as integer)`;
}
