import { randomFillSync } from "node:crypto";
import { idLength } from "@sdk/protocol";

const alphabet = "abcdefghijklmnopqrstuvwxyz234567";

/** Random bytes drawn from a pool refilled 4 KB at a time: a log line or state value each needs an id. */
const pool = Buffer.alloc(4096);
let poolUsed = pool.length;

function randomChars(length: number, chars: string): string {
  if (poolUsed + length > pool.length) {
    randomFillSync(pool);
    poolUsed = 0;
  }
  let out = "";
  for (let i = 0; i < length; i++) out += chars[pool[poolUsed + i]! & 31];
  poolUsed += length;
  return out;
}

/** Random lowercase base32: 5 bits of entropy a character. */
function randomBase32(length: number): string {
  return randomChars(length, alphabet);
}

/** An opaque id such as `prj_3k7…`: a prefix and `idLength` random characters (100 bits). */
export function newId(prefix: string): string {
  return `${prefix}_${randomBase32(idLength)}`;
}

/** The same 32 characters in ASCII order, so that sortable ids compare as text in time order. */
const ordered = "234567abcdefghijklmnopqrstuvwxyz";

function randomOrdered(length: number): string {
  return randomChars(length, ordered);
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
