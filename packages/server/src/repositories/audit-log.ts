import type { Kysely, Selectable } from "kysely";
import type { AuditLogTable, DB } from "../db/schema.ts";

export type AuditRow = Selectable<AuditLogTable>;

export function auditLogRepository(db: Kysely<DB>) {
  return {
    insert: async (row: AuditRow) => {
      await db.insertInto("auditLog").values(row).execute();
    },
    /** Newest first; `before` is the id of the last entry of the previous page (`null` when unknown). */
    list: async (limit: number, before?: string) => {
      let query = db.selectFrom("auditLog").selectAll();
      if (before !== undefined) {
        const anchor = await db
          .selectFrom("auditLog")
          .select(["at", "id"])
          .where("id", "=", before)
          .executeTakeFirst();
        if (!anchor) return null;
        query = query.where((eb) =>
          eb.or([eb("at", "<", anchor.at), eb.and([eb("at", "=", anchor.at), eb("id", "<", anchor.id)])]),
        );
      }
      return query.orderBy("at", "desc").orderBy("id", "desc").limit(limit).execute();
    },
  };
}
export type AuditLogRepository = ReturnType<typeof auditLogRepository>;
