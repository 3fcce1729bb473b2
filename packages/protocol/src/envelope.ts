import { z } from "zod";

export const ErrorBody = z.object({
  code: z.string(),
  message: z.string(),
  docs: z.string(),
  /** For `invalid_request`: each bad field and what is wrong with it. */
  fields: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
  /** Facts that explain the error, e.g. the disk figures of a 503 from `/ready`. */
  details: z.record(z.string(), z.unknown()).optional(),
});
export type ErrorBody = z.infer<typeof ErrorBody>;

export const ErrorEnvelope = z.object({ success: z.literal(false), error: ErrorBody });
export type ErrorEnvelope = z.infer<typeof ErrorEnvelope>;

export function successEnvelope<T extends z.ZodType>(result: T) {
  return z.object({ success: z.literal(true), result });
}
