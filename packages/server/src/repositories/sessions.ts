import type { Kysely } from "kysely";
import type { DB } from "../db/schema.ts";

export function sessionsRepository(db: Kysely<DB>) {
  return {
    insert: async (row: { id: string; userId: string; createdAt: number; expiresAt: number }) => {
      await db.insertInto("sessions").values(row).execute();
    },
    /** The user behind an unexpired session. */
    findUser: (sessionHash: string, now: number) =>
      db
        .selectFrom("sessions")
        .innerJoin("users", "users.id", "sessions.userId")
        .selectAll("users")
        .where("sessions.id", "=", sessionHash)
        .where("sessions.expiresAt", ">", now)
        .executeTakeFirst(),
    delete: async (sessionHash: string) => {
      await db.deleteFrom("sessions").where("id", "=", sessionHash).execute();
    },
    deleteOthers: async (userId: string, keepHash: string | null) => {
      let query = db.deleteFrom("sessions").where("userId", "=", userId);
      if (keepHash) query = query.where("id", "!=", keepHash);
      await query.execute();
    },
    deleteExpired: async (now: number) => {
      await db.deleteFrom("sessions").where("expiresAt", "<=", now).execute();
    },
  };
}
