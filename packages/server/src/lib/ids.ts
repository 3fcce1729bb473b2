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

let lastTime = -1;
let lastRandom = "";

function increment(base32: string): string {
  const chars = [...base32];
  for (let i = chars.length - 1; i >= 0; i--) {
    const next = alphabet.indexOf(chars[i]!) + 1;
    if (next < alphabet.length) {
      chars[i] = alphabet[next]!;
      return chars.join("");
    }
    chars[i] = alphabet[0]!;
  }
  return randomBase32(base32.length); // overflow within one millisecond: practically never
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
    lastRandom = randomBase32(10);
  }
  let time = "";
  let t = Math.max(lastTime, now);
  for (let i = 0; i < 10; i++) {
    time = alphabet[t % 32] + time;
    t = Math.floor(t / 32);
  }
  return `${prefix}_${time}${lastRandom}`;
}
