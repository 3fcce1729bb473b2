import { type EntityConfig, type HaCommand, haCommandProblem } from "@sdk/protocol";

/**
 * A command Home Assistant published for a switch or light, as the `ha_command` message the
 * script's onMessage receives; or why it is dropped. Keys a light was not declared with
 * (brightness, color) and the ones scripts do not handle (transition, flash, effect) are left out.
 * The message is checked with the same rule as `isHaCommand` in scripts (`haCommandProblem`).
 */
export function decodeCommand(entity: EntityConfig, payload: string): HaCommand | { error: string } {
  const shown = JSON.stringify(payload.length > 200 ? `${payload.slice(0, 200)}…` : payload);
  if (entity.kind === "switch") {
    if (payload === "ON" || payload === "OFF")
      return { type: "ha_command", entityId: entity.id, kind: "switch", state: payload };
    return { error: `a command for switch "${entity.id}" must be ON or OFF (got ${shown})` };
  }
  if (entity.kind !== "light") return { error: `"${entity.id}" is a ${entity.kind}: it takes no commands` };
  let body: unknown;
  try {
    body = JSON.parse(payload);
  } catch {
    return { error: `a command for light "${entity.id}" must be JSON (got ${shown})` };
  }
  if (!body || typeof body !== "object" || Array.isArray(body))
    return { error: `a command for light "${entity.id}" must be a JSON object (got ${shown})` };
  const { state, brightness, color } = body as Record<string, unknown>;
  if (state !== "ON" && state !== "OFF")
    return { error: `a command for light "${entity.id}" needs "state": "ON" or "OFF" (got ${shown})` };
  const command: Record<string, unknown> = { type: "ha_command", entityId: entity.id, kind: "light", state };
  if (entity.brightness && brightness !== undefined) command.brightness = brightness;
  if (entity.rgb && color !== undefined) command.color = color;
  const problem = haCommandProblem(command);
  if (problem) return { error: `a command for light "${entity.id}": ${problem}` };
  if (command.color) {
    const { r, g, b } = command.color as { r: number; g: number; b: number };
    command.color = { r, g, b };
  }
  return command as unknown as HaCommand; // haCommandProblem found nothing wrong
}
