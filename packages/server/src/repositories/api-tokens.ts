import type { Kysely, Selectable } from "kysely";
import type { ApiTokensTable, DB } from "../db/schema.ts";

export type ApiTokenRow = Selectable<ApiTokensTable>;

export function apiTokensRepository(db: Kysely<DB>) {
  return {
    insert: async (row: ApiTokenRow) => {
      await db.insertInto("apiTokens").values(row).execute();
    },
    /** The token row and its user, by the token's hash. */
    findByHash: async (tokenHash: string) => {
      const row = await db
        .selectFrom("apiTokens")
        .innerJoin("users", "users.id", "apiTokens.userId")
        .select([
          "apiTokens.id as tokenId",
          "apiTokens.lastUsedAt as tokenLastUsedAt",
          "users.id",
          "users.email",
          "users.passwordHash",
          "users.role",
          "users.createdAt",
          "users.updatedAt",
        ])
        .where("apiTokens.tokenHash", "=", tokenHash)
        .executeTakeFirst();
      if (!row) return undefined;
      const { tokenId, tokenLastUsedAt, ...user } = row;
      return { tokenId, tokenLastUsedAt, user };
    },
    listForUser: (userId: string) =>
      db
        .selectFrom("apiTokens")
        .select(["id", "name", "createdAt", "lastUsedAt"])
        .where("userId", "=", userId)
        .orderBy("createdAt")
        .orderBy("id")
        .execute(),
    touch: async (id: string, now: number) => {
      await db.updateTable("apiTokens").set({ lastUsedAt: now }).where("id", "=", id).execute();
    },
    deleteForUser: async (userId: string, id: string) => {
      const result = await db
        .deleteFrom("apiTokens")
        .where("id", "=", id)
        .where("userId", "=", userId)
        .executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },
  };
}
