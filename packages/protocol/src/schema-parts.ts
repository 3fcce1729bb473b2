import { z } from "zod";

// Pieces the schemas share that are not part of @sdk/protocol's public exports.

export const Timestamp = z.string().describe("ISO 8601 date-time in UTC");

export const utf8 = new TextEncoder();

const isControl = (c: string) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f;

/** A display name: 1–100 characters after trimming, no control characters. */
export const Name = (what: string) =>
  z
    .string()
    .trim()
    .min(1, `${what} must not be empty`)
    .max(100, `${what} must be at most 100 characters`)
    .refine((value) => ![...value].some(isControl), `${what} must not contain control characters`);
