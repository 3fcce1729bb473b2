import type { Kysely } from "kysely";
import type { DB } from "../db/schema.ts";

/** Whether the database holds values sealed with secret.key (env vars, webhook secrets). */
export async function hasEncryptedRows(db: Kysely<DB>): Promise<boolean> {
  const envVar = await db.selectFrom("envVars").select("name").limit(1).executeTakeFirst();
  if (envVar) return true;
  return (await db.selectFrom("alertWebhooks").select("id").limit(1).executeTakeFirst()) !== undefined;
}
