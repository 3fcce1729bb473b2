import { z } from "zod";
import { allGpios, edges, onboardLed, pinLevels, pinModes, pulls } from "./hardware.ts";
import { Timestamp } from "./schema-parts.ts";

/**
 * What the server knows about one pin of a connected board: only what it saw on this connection —
 * the commands it sent (pin_mode, gpio_write, gpio_read, gpio_toggle, gpio_watch, gpio_unwatch, pwm)
 * and their answers, and the board's gpio_change events. A pin nothing touched is not listed.
 */
export const PinState = z.object({
  pin: z.union([z.literal(allGpios), z.literal(onboardLed)]).describe('A GPIO number, or "LED"'),
  mode: z
    .enum([...pinModes, "pwm"])
    .nullable()
    .describe("null until a command set it"),
  pull: z.enum(pulls).nullable(),
  level: z
    .literal(pinLevels)
    .nullable()
    .describe("The last level written, read or reported; null when unknown"),
  watch: z
    .object({ edge: z.enum(edges), debounceMs: z.number().int().nullable() })
    .nullable()
    .describe("Set while the board reports this input's changes (gpio_change)"),
  pwm: z.object({ frequency: z.number(), duty: z.number() }).nullable(),
  updatedAt: Timestamp,
});
export type PinState = z.infer<typeof PinState>;
