import { z } from "zod";
import { Timestamp } from "./schema-parts.ts";

/** The widest a project's retention may be set (counts are further bounded by the server's own). */
export const retentionLimits = {
  logMaxEntries: { min: 10, max: 1_000_000 },
  logMaxAgeDays: { min: 1, max: 3650 },
  stateHistoryMaxEntries: { min: 1, max: 100_000 },
  stateHistoryMaxAgeDays: { min: 1, max: 3650 },
} as const;

const whole = (name: keyof typeof retentionLimits) =>
  z
    .number()
    .int("must be a whole number")
    .min(retentionLimits[name].min, `must be at least ${retentionLimits[name].min}`)
    .max(retentionLimits[name].max, `must be at most ${retentionLimits[name].max}`);

export const Retention = z.object({
  logMaxEntries: z.number().int().describe("Log entries kept per device (the newest)."),
  logMaxAgeDays: z.number().int().describe("Log entries older than this many days are removed."),
  stateHistoryMaxEntries: z.number().int().describe("History values kept per state entity (the newest)."),
  stateHistoryMaxAgeDays: z.number().int().describe("History values older than this many days are removed."),
  custom: z.boolean().describe("false: the server's defaults apply (nothing set for this project)."),
  updatedAt: Timestamp.nullable(),
  serverLimits: z
    .object({ logMaxEntries: z.number().int(), stateHistoryMaxEntries: z.number().int() })
    .describe("The most entries this server keeps, whatever a project asks for."),
});
export type Retention = z.infer<typeof Retention>;

export const SetRetentionBody = z
  .object({
    logMaxEntries: whole("logMaxEntries").optional(),
    logMaxAgeDays: whole("logMaxAgeDays").optional(),
    stateHistoryMaxEntries: whole("stateHistoryMaxEntries").optional(),
    stateHistoryMaxAgeDays: whole("stateHistoryMaxAgeDays").optional(),
  })
  .strict()
  .describe("Any of the four rules; the ones left out keep their current value");
