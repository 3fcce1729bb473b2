import { z } from "zod";

/**
 * A tag: 1–32 characters, lowercase letters, digits, `-` and `_`, starting with a letter or digit
 * (`kitchen`, `floor-2`, `batch_2026`). A device has at most 16.
 */
export const tagPattern = /^[a-z0-9][a-z0-9_-]{0,31}$/;
export const tagLimits = { maxLength: 32, perDevice: 16 } as const;

export const Tag = z
  .string()
  .regex(
    tagPattern,
    "must be 1–32 lowercase letters, digits, - or _, starting with a letter or digit (e.g. kitchen, floor-2)",
  );
