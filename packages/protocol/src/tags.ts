import { z } from "zod";
import { Board } from "./fields.ts";
import { CreatedDevice, SendCommandBody, SendMessageBody } from "./requests.ts";
import { Name } from "./schema-parts.ts";
import { Tag, tagLimits } from "./tag.ts";

export { Tag, tagLimits, tagPattern } from "./tag.ts";

// Device tags (groups of devices) and the actions that reach every device with a tag.

/** A list of tags: duplicates collapse, sorted. */
const TagList = (min: number) =>
  z
    .array(Tag)
    .min(min, `list at least ${min} tag`)
    .max(tagLimits.perDevice, `a device has at most ${tagLimits.perDevice} tags`)
    .transform((tags) => [...new Set(tags)].sort());

export const SetTagsBody = z.object({
  tags: TagList(0).describe("Every tag of the device (replaces the ones it had; [] removes all)."),
});
export const AddTagsBody = z.object({ tags: TagList(1).describe("Tags to add to the device.") });

export const ListDevicesQuery = z.object({
  tag: Tag.optional().describe("Only devices with this tag."),
});

/** Actions on every device with a tag: how many run at once, and how long the whole may take. */
export const tagActionLimits = {
  concurrency: 8,
  defaultTimeoutSeconds: 30,
  maxTimeoutSeconds: 120,
} as const;

const timeoutSeconds = z
  .number()
  .int()
  .min(1)
  .max(tagActionLimits.maxTimeoutSeconds)
  .default(tagActionLimits.defaultTimeoutSeconds)
  .describe(
    `Overall time limit in seconds (default ${tagActionLimits.defaultTimeoutSeconds}, at most ${tagActionLimits.maxTimeoutSeconds}); devices without an answer by then are reported as device_timeout.`,
  );

export const TagCommandBody = SendCommandBody.extend({
  tag: Tag.describe("Every device of the project with this tag"),
  timeoutSeconds,
});
export const TagMessageBody = z.object({
  tag: Tag.describe("Every device of the project with this tag"),
  message: SendMessageBody,
});

const DeviceFailure = z.object({
  ok: z.literal(false),
  deviceId: z.string(),
  name: z.string(),
  error: z.object({
    code: z.string().describe("An error code (docs/errors.md): device_offline, device_timeout, no_script, …"),
    message: z.string(),
  }),
});
export const TagCommandOutcome = z.object({
  tag: z.string(),
  devices: z
    .array(
      z.discriminatedUnion("ok", [
        z.object({ ok: z.literal(true), deviceId: z.string(), name: z.string(), value: z.unknown() }),
        DeviceFailure,
      ]),
    )
    .describe("One answer per device with the tag, in the device list's order"),
});
export type TagCommandOutcome = z.infer<typeof TagCommandOutcome>;
export const TagMessageOutcome = z.object({
  tag: z.string(),
  devices: z.array(
    z.discriminatedUnion("ok", [
      z.object({ ok: z.literal(true), deviceId: z.string(), name: z.string() }),
      DeviceFailure,
    ]),
  ),
});
export type TagMessageOutcome = z.infer<typeof TagMessageOutcome>;

/** Bulk provisioning: at most this many devices per request. */
export const bulkDeviceLimits = { maxDevices: 500 } as const;

export const BulkDeviceRow = z.object({
  name: Name(),
  board: Board,
  tags: TagList(0).default([]),
});
export const CreateDevicesBody = z.object({
  devices: z
    .array(BulkDeviceRow)
    .min(1, "list at least one device")
    .max(bulkDeviceLimits.maxDevices, `at most ${bulkDeviceLimits.maxDevices} devices per request`)
    .describe("The devices to add; if any row is invalid none is added, and every bad row is named"),
});
export const CreatedDevices = z.object({
  devices: z.array(CreatedDevice).describe("In the order given; each secret is shown only this once"),
});
export type CreatedDevices = z.infer<typeof CreatedDevices>;
