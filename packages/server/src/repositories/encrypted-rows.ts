import type { Kysely } from "kysely";
import type { DB } from "../db/schema.ts";

/** Whether the database holds values sealed with secret.key (env vars, webhook secrets). */
export async function hasEncryptedRows(db: Kysely<DB>): Promise<boolean> {
  const envVar = await db.selectFrom("envVars").select("name").limit(1).executeTakeFirst();
  if (envVar) return true;
  return (await db.selectFrom("alertWebhooks").select("id").limit(1).executeTakeFirst()) !== undefined;
}

/** Sealed values to try a key on: a few env vars and webhook secrets, with what binds each. */
export async function sampleEncryptedRows(
  db: Kysely<DB>,
  limit: number,
): Promise<{
  envVars: { projectId: string; name: string; valueEncrypted: string }[];
  webhooks: { projectId: string; id: string; secretEncrypted: string }[];
}> {
  const envVars = await db
    .selectFrom("envVars")
    .select(["projectId", "name", "valueEncrypted"])
    .limit(limit)
    .execute();
  const webhooks = await db
    .selectFrom("alertWebhooks")
    .select(["projectId", "id", "secretEncrypted"])
    .where("secretEncrypted", "!=", "")
    .limit(limit)
    .execute();
  return { envVars, webhooks };
}

const keyCheckName = "secretKey";

/** The secret key's check value stored in the database, if one was written. */
export async function storedKeyCheck(db: Kysely<DB>): Promise<string | undefined> {
  const row = await db
    .selectFrom("keyCheck")
    .select("value")
    .where("name", "=", keyCheckName)
    .executeTakeFirst();
  return row?.value;
}

/**
 * Stores the key's check value unless one is stored already (`replace`: over the stored one).
 * Returns the value stored afterwards: with two servers starting at once, the first one's.
 */
export async function writeKeyCheck(
  db: Kysely<DB>,
  value: string,
  at: number,
  options: { replace?: boolean } = {},
): Promise<string | undefined> {
  await db
    .insertInto("keyCheck")
    .values({ name: keyCheckName, value, createdAt: at })
    .onConflict((oc) =>
      options.replace
        ? oc.column("name").doUpdateSet({ value, createdAt: at })
        : oc.column("name").doNothing(),
    )
    .execute();
  return storedKeyCheck(db);
}
