import {
  commandTypes,
  customTypePattern,
  DeviceLog,
  deviceMessageSchemas,
  type LogLevel,
  StateReport,
} from "@sdk/protocol";
import type { DeviceMessage } from "./types.ts";

// The device → server messages the library lets a test send, checked before they leave.

const reservedTypes = new Set<string>([...Object.keys(deviceMessageSchemas), ...commandTypes, "welcome"]);

/** A `log` message; longer messages are cut at 4096 characters. */
export function logMessage(level: LogLevel, message: string): DeviceMessage {
  return DeviceLog.parse({ type: "log", level, message: message.slice(0, 4096) });
}

/** A `state` report; throws a RangeError for an invalid entity id. */
export function stateMessage(entityId: string, value: unknown): DeviceMessage {
  const parsed = StateReport.safeParse({ type: "state", entityId, value });
  if (!parsed.success) throw new RangeError(`invalid entity id ${JSON.stringify(entityId)}`);
  return { type: "state", entityId, value };
}

/** A custom event: a lower_snake_case type the protocol does not reserve, and no `type` field. */
export function eventMessage(type: string, fields: Record<string, unknown>): DeviceMessage {
  if (!customTypePattern.test(type) || reservedTypes.has(type)) {
    throw new RangeError(
      `${JSON.stringify(type)} is not a custom event type (lower_snake_case, not reserved)`,
    );
  }
  if ("type" in fields) throw new RangeError("custom event fields cannot include `type`");
  return { type, ...fields };
}

/** A raw frame as the `sent` event reports it: the parsed object, or {type:"raw"} when it is not one. */
export function parseSent(text: string): DeviceMessage {
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value === "object" && value !== null && !Array.isArray(value)) {
      const message = value as Record<string, unknown>;
      return { ...message, type: typeof message.type === "string" ? message.type : "raw" };
    }
  } catch {
    // not JSON
  }
  return { type: "raw", text };
}
