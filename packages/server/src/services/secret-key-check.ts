import type { Kysely } from "kysely";
import type { DB } from "../db/schema.ts";
import { isDatabaseUnavailable } from "../errors.ts";
import type { SecretBox } from "../lib/secret-box.ts";
import {
  hasEncryptedRows,
  sampleEncryptedRows,
  storedKeyCheck,
  writeKeyCheck,
} from "../repositories/encrypted-rows.ts";
import { webhookSecretContext } from "./alerts.ts";
import { envVarContext } from "./env-vars.ts";

/** Stored values tried on a key, for a database written before it held a check value. */
const sampleSize = 10;

/** Why a server with this key file must not start on this database. */
function wrongKeyMessage(keyFile: string, cluster: boolean): string {
  const head = `SECRET_KEY_FILE (${keyFile}) does not hold the key this database's secrets were written with`;
  return cluster
    ? `${head}; every instance needs the same key file`
    : `${head} (env vars, webhook secrets): put back the key file that belongs to this database (every backup holds it, as secret.key), or restore a whole backup with sdk-server restore`;
}

/**
 * At boot: whether `box` holds the key this database's secrets were written with, by the check
 * value stored in the database (an HMAC of a fixed label with the key: SecretBox.checkValue). The
 * first boot with a key stores it; a database written before there was one gets it once the key
 * opens a stored value (or when there is none). Another key throws (see `wrongKeyMessage`), except
 * for one server whose database holds nothing encrypted yet: its new key replaces the old one's
 * check value (nothing was written with the old key). In a cluster that is never done: the
 * instances with the first key would write values this one cannot read, and the reverse.
 */
export async function checkSecretKey(
  db: Kysely<DB>,
  box: SecretBox,
  options: { keyFile: string; cluster: boolean; now: number },
): Promise<void> {
  const mine = box.checkValue();
  const stored = await storedKeyCheck(db);
  if (stored === mine) return;
  const refuse = () => new Error(wrongKeyMessage(options.keyFile, options.cluster));
  if (stored === undefined) {
    if (!(await opensAny(db, box))) throw refuse();
    // Two instances starting at once: the first value written stays, the other one compares with it.
    let written: string | undefined;
    try {
      written = await writeKeyCheck(db, mine, options.now);
    } catch (error) {
      // A full disk: the key opened what is stored; the check value is written at a later boot.
      if (isDatabaseUnavailable(error)) return;
      throw error;
    }
    if (written !== mine) throw refuse();
    return;
  }
  if (options.cluster || (await hasEncryptedRows(db))) throw refuse();
  await writeKeyCheck(db, mine, options.now, { replace: true });
}

/** Whether the key opens one of the stored values, or there is none to try. */
async function opensAny(db: Kysely<DB>, box: SecretBox): Promise<boolean> {
  const { envVars, webhooks } = await sampleEncryptedRows(db, sampleSize);
  const tries = [
    ...envVars.map((r) => () => box.open(r.valueEncrypted, envVarContext(r.projectId, r.name))),
    ...webhooks.map((r) => () => box.open(r.secretEncrypted, webhookSecretContext(r))),
  ];
  if (tries.length === 0) return true;
  return tries.some((open) => {
    try {
      open();
      return true;
    } catch {
      return false;
    }
  });
}
