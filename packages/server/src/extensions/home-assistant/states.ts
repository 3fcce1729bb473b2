import { type EntityConfig, isHaByte, isHaColor } from "@sdk/protocol";
import { colorModeOf } from "./discovery.ts";

/** A value from `emitState` as the payload its kind needs, or why it cannot be one. */
export type Encoded = { payload: string } | { error: string };

function onOff(value: unknown): "ON" | "OFF" | null {
  if (value === true || value === "ON" || value === "on" || value === 1) return "ON";
  if (value === false || value === "OFF" || value === "off" || value === 0) return "OFF";
  return null;
}

function light(entity: EntityConfig, value: unknown): Encoded {
  const plain = onOff(value);
  const object = plain ? { state: plain } : (value as Record<string, unknown> | null);
  const state = object && typeof object === "object" ? onOff(object.state) : null;
  if (!object || !state)
    return {
      error: `the state of light "${entity.id}" must be true/false, "ON"/"OFF" or { state, brightness?, color? } (got ${JSON.stringify(value)})`,
    };
  const out: Record<string, unknown> = { state, color_mode: colorModeOf(entity) };
  if (entity.brightness && object.brightness !== undefined) {
    if (!isHaByte(object.brightness))
      return { error: `the brightness of light "${entity.id}" must be a whole number 0–255` };
    out.brightness = object.brightness;
  }
  if (entity.rgb && object.color !== undefined) {
    const c = object.color;
    if (!isHaColor(c))
      return { error: `the color of light "${entity.id}" must be { r, g, b } with whole numbers 0–255` };
    out.color = { r: c.r, g: c.g, b: c.b };
  }
  return { payload: JSON.stringify(out) };
}

/** Sensors: numbers and strings as they are; switches and binary sensors: ON/OFF; lights: JSON. */
export function encodeState(entity: EntityConfig, value: unknown): Encoded {
  switch (entity.kind) {
    case "sensor":
      if (value === null) return { payload: "None" };
      if (typeof value === "string") return { payload: value };
      if (typeof value === "number" || typeof value === "boolean") return { payload: String(value) };
      return { payload: JSON.stringify(value) };
    case "binary_sensor":
    case "switch": {
      const state = onOff(value);
      return state
        ? { payload: state }
        : {
            error: `the state of ${entity.kind} "${entity.id}" must be true/false or "ON"/"OFF" (got ${JSON.stringify(value)})`,
          };
    }
    case "light":
      return light(entity, value);
  }
}
