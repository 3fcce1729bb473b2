import type { Kysely, Selectable } from "kysely";
import type { DB, UsersTable } from "../db/schema.ts";

export type UserRow = Selectable<UsersTable>;

export function usersRepository(db: Kysely<DB>) {
  return {
    count: async () =>
      Number(
        (
          await db
            .selectFrom("users")
            .select((eb) => eb.fn.countAll().as("n"))
            .executeTakeFirstOrThrow()
        ).n,
      ),
    countAdmins: async () =>
      Number(
        (
          await db
            .selectFrom("users")
            .where("role", "=", "admin")
            .select((eb) => eb.fn.countAll().as("n"))
            .executeTakeFirstOrThrow()
        ).n,
      ),
    findById: (id: string) => db.selectFrom("users").selectAll().where("id", "=", id).executeTakeFirst(),
    findByEmail: (email: string) =>
      db.selectFrom("users").selectAll().where("email", "=", email).executeTakeFirst(),
    list: () => db.selectFrom("users").selectAll().orderBy("createdAt").orderBy("id").execute(),
    insert: async (row: UserRow) => {
      await db.insertInto("users").values(row).execute();
    },
    updateRole: (id: string, role: UserRow["role"], now: number) =>
      db
        .updateTable("users")
        .set({ role, updatedAt: now })
        .where("id", "=", id)
        .returningAll()
        .executeTakeFirst(),
    updatePassword: async (id: string, passwordHash: string, now: number) => {
      await db.updateTable("users").set({ passwordHash, updatedAt: now }).where("id", "=", id).execute();
    },
    delete: async (id: string) => {
      const result = await db.deleteFrom("users").where("id", "=", id).executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },
  };
}
