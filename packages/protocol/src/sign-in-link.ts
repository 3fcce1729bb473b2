// One-time sign-in links: `sdk dev` holds a key it gave its own local server (SIGN_IN_LINK_KEY)
// and signs short-lived tokens with it; the server accepts each token once. Node only.
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

/** The longest a token may live, whatever its signer says. */
export const signInLinkMaxTtlMs = 10 * 60_000;
/** The path the server answers sign-in links at (`?token=…`). */
export const signInLinkPath = "/sign-in-link";

interface Claims {
  /** The account to sign in. */
  email: string;
  /** Expiry, ms since the epoch. */
  exp: number;
  /** Makes each token unique, so that the server can refuse a second use. */
  nonce: string;
}

const sign = (key: string, payload: string) => createHmac("sha256", key).update(payload).digest();

/** A new random key (base64url, 256 bits). */
export function newSignInLinkKey(): string {
  return randomBytes(32).toString("base64url");
}

/** A token that signs `email` in once, until `now + ttlMs` (at most signInLinkMaxTtlMs). */
export function mintSignInToken(key: string, email: string, ttlMs: number, now = Date.now()): string {
  const claims: Claims = {
    email,
    exp: now + Math.min(ttlMs, signInLinkMaxTtlMs),
    nonce: randomBytes(16).toString("base64url"),
  };
  const payload = Buffer.from(JSON.stringify(claims)).toString("base64url");
  return `${payload}.${sign(key, payload).toString("base64url")}`;
}

/** The token's claims if its signature is good and it has not expired; else null. Does not check reuse. */
export function readSignInToken(key: string, token: string, now = Date.now()): Claims | null {
  const [payload, signature, extra] = token.split(".");
  if (!payload || !signature || extra !== undefined) return null;
  const expected = sign(key, payload);
  const given = Buffer.from(signature, "base64url");
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  let claims: Partial<Claims>;
  try {
    claims = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
  } catch {
    return null;
  }
  const { email, exp, nonce } = claims;
  if (typeof email !== "string" || typeof exp !== "number" || typeof nonce !== "string") return null;
  if (exp <= now || exp > now + signInLinkMaxTtlMs) return null;
  return { email, exp, nonce };
}
