import type { Kysely } from "kysely";
import type { DB } from "../db/schema.ts";

/** The sign-in rate limiter's attempts (services/rate-limiter.ts), one row per attempt and key. */
export function loginAttemptsRepository(db: Kysely<DB>) {
  return {
    /** The attempts of these keys after `since`, oldest first. */
    since: (keys: string[], since: number) =>
      db
        .selectFrom("loginAttempts")
        .select(["key", "at"])
        .where("key", "in", keys)
        .where("at", ">", since)
        .orderBy("key")
        .orderBy("at")
        .execute(),

    /**
     * Records one attempt at `at` for each key, then keeps at most `keep` of each key's attempts
     * after `since` (the newest) and none before: a key's rows never outgrow the limit.
     */
    record: (keys: string[], at: number, since: number, keep: number) =>
      db.transaction().execute(async (tx) => {
        await tx
          .insertInto("loginAttempts")
          .values(keys.map((key) => ({ key, at })))
          .execute();
        for (const key of keys) {
          const newest = await tx
            .selectFrom("loginAttempts")
            .select("at")
            .where("key", "=", key)
            .orderBy("at", "desc")
            .offset(keep - 1)
            .limit(1)
            .executeTakeFirst();
          await tx
            .deleteFrom("loginAttempts")
            .where("key", "=", key)
            .where("at", "<", Math.max(newest?.at ?? 0, since + 1))
            .execute();
        }
      }),

    clear: (key: string) => db.deleteFrom("loginAttempts").where("key", "=", key).execute(),

    /** Drops every attempt at or before `before` (of keys nobody tried since). */
    prune: (before: number) => db.deleteFrom("loginAttempts").where("at", "<=", before).execute(),
  };
}
export type LoginAttemptsRepository = ReturnType<typeof loginAttemptsRepository>;
