import { randomBytes } from "node:crypto";
import { idLength } from "@sdk/protocol";

const alphabet = "abcdefghijklmnopqrstuvwxyz234567";

/** Random lowercase base32: `bits` of entropy per 5 bits a character. */
function randomBase32(length: number): string {
  const bytes = randomBytes(length);
  let out = "";
  for (const byte of bytes) out += alphabet[byte & 31];
  return out;
}

/** An opaque id such as `prj_3k7…`: a prefix and `idLength` random characters (100 bits). */
export function newId(prefix: string): string {
  return `${prefix}_${randomBase32(idLength)}`;
}

/** The same 32 characters in ASCII order, so that sortable ids compare as text in time order. */
const ordered = "234567abcdefghijklmnopqrstuvwxyz";

function randomOrdered(length: number): string {
  let out = "";
  for (const byte of randomBytes(length)) out += ordered[byte & 31];
  return out;
}

let lastTime = -1;
let lastRandom = "";

function increment(base32: string): string {
  const chars = [...base32];
  for (let i = chars.length - 1; i >= 0; i--) {
    const next = ordered.indexOf(chars[i]!) + 1;
    if (next < ordered.length) {
      chars[i] = ordered[next]!;
      return chars.join("");
    }
    chars[i] = ordered[0]!;
  }
  return randomOrdered(base32.length); // overflow within one millisecond: practically never
}

/**
 * An id that sorts by creation time (like a ULID, in lowercase base32): 10 characters of time
 * and 10 random ones, strictly increasing within this process even inside one millisecond.
 */
export function newSortableId(prefix: string, now: number): string {
  if (now <= lastTime) {
    lastRandom = increment(lastRandom);
  } else {
    lastTime = now;
    lastRandom = randomOrdered(10);
  }
  return `${prefix}_${timePart(Math.max(lastTime, now))}${lastRandom}`;
}

function timePart(at: number): string {
  let time = "";
  let t = Math.max(0, Math.floor(at));
  for (let i = 0; i < 10; i++) {
    time = ordered[t % 32] + time;
    t = Math.floor(t / 32);
  }
  return time;
}

/**
 * Sorts after every sortable id of `prefix` made before `at` and before every one made at or
 * after it: `id < sortableIdBefore(prefix, at)` selects rows created before `at` by the index on id.
 */
export function sortableIdBefore(prefix: string, at: number): string {
  return `${prefix}_${timePart(at)}`;
}
