import type { EntityConfig, HaCommand } from "@sdk/protocol";

const byte = (v: unknown): v is number => Number.isInteger(v) && (v as number) >= 0 && (v as number) <= 255;

/**
 * A command Home Assistant published for a switch or light, as the `ha_command` message the
 * script's onMessage receives; or why it is dropped. Keys a light was not declared with
 * (brightness, color) and the ones scripts do not handle (transition, flash, effect) are left out.
 */
export function decodeCommand(entity: EntityConfig, payload: string): HaCommand | { error: string } {
  const shown = payload.length > 200 ? `${payload.slice(0, 200)}…` : payload;
  if (entity.kind === "switch") {
    if (payload === "ON" || payload === "OFF")
      return { type: "ha_command", entityId: entity.id, kind: "switch", state: payload };
    return { error: `a command for switch "${entity.id}" must be ON or OFF (got ${JSON.stringify(shown)})` };
  }
  if (entity.kind !== "light") return { error: `"${entity.id}" is a ${entity.kind}: it takes no commands` };
  let body: unknown;
  try {
    body = JSON.parse(payload);
  } catch {
    return { error: `a command for light "${entity.id}" must be JSON (got ${JSON.stringify(shown)})` };
  }
  if (!body || typeof body !== "object" || Array.isArray(body))
    return {
      error: `a command for light "${entity.id}" must be a JSON object (got ${JSON.stringify(shown)})`,
    };
  const { state, brightness, color } = body as Record<string, unknown>;
  if (state !== "ON" && state !== "OFF")
    return {
      error: `a command for light "${entity.id}" needs "state": "ON" or "OFF" (got ${JSON.stringify(shown)})`,
    };
  const command: HaCommand = { type: "ha_command", entityId: entity.id, kind: "light", state };
  if (entity.brightness && brightness !== undefined) {
    if (!byte(brightness))
      return { error: `the brightness for light "${entity.id}" must be a whole number 0–255` };
    command.brightness = brightness;
  }
  if (entity.rgb && color !== undefined) {
    const c = color as Record<string, unknown> | null;
    if (!c || typeof c !== "object" || !byte(c.r) || !byte(c.g) || !byte(c.b))
      return { error: `the color for light "${entity.id}" must be { r, g, b } with whole numbers 0–255` };
    command.color = { r: c.r, g: c.g, b: c.b };
  }
  return command;
}
