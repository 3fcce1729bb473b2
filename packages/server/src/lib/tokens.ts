import { createHash, randomBytes } from "node:crypto";

/** A high-entropy secret with a recognisable prefix (`sdk_…` API tokens, `dsk_…` device secrets). */
export function newSecret(prefix: string): string {
  return `${prefix}_${randomBytes(32).toString("base64url")}`;
}

/**
 * Secrets carry 256 random bits, so a plain SHA-256 is enough to store them: unlike passwords they
 * cannot be guessed, and a fast hash lets every request look its token up by hash.
 */
export function hashSecret(secret: string): string {
  return createHash("sha256").update(secret).digest("hex");
}
