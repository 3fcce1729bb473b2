import { randomBytes } from "node:crypto";

const alphabet = "abcdefghijklmnopqrstuvwxyz234567";

/** Random lowercase base32: `bits` of entropy per 5 bits a character. */
export function randomBase32(length: number): string {
  const bytes = randomBytes(length);
  let out = "";
  for (const byte of bytes) out += alphabet[byte & 31];
  return out;
}

/** An opaque id such as `prj_3k7…`: a prefix and 100 random bits. */
export function newId(prefix: string): string {
  return `${prefix}_${randomBase32(20)}`;
}
