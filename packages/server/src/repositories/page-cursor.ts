import { type Kysely, sql } from "kysely";
import type { DB } from "../db/schema.ts";

/** Lists paged with a `before` cursor: an entry's id sorts by time. */
type PagedTable = "deviceLogs" | "deviceStateHistory";

/**
 * Whether `before` is an entry of the list being paged (`scope`: its device, its entity…). A cursor
 * that is unknown, pruned, or another list's is refused by the caller, never read as the first page.
 */
export async function isEntryOf(
  db: Kysely<DB>,
  table: PagedTable,
  before: string,
  scope: { deviceId: string; entityId?: string },
): Promise<boolean> {
  const filters = Object.entries({ id: before, ...scope }).filter(([, value]) => value !== undefined);
  const row = await db
    .selectFrom(table)
    .select(sql.lit(1).as("found"))
    .where((eb) => eb.and(filters.map(([column, value]) => eb(sql.ref(column), "=", value))))
    .executeTakeFirst();
  return row !== undefined;
}
