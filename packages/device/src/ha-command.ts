import { type HaCommand, haCommandProblem } from "@sdk/protocol/hardware";

export type { HaCommand } from "@sdk/protocol/hardware";

/**
 * Whether an `onMessage` message is a Home Assistant command for one of this project's switches or
 * lights, in its exact shape: `{ type: "ha_command", entityId, kind: "switch" | "light", state:
 * "ON" | "OFF", brightness?: 0–255, color?: { r, g, b } }` (brightness and color only for lights).
 * Confirm it with `emitState(msg.entityId, …)` once the board did it.
 */
export function isHaCommand(message: unknown): message is HaCommand {
  return haCommandProblem(message) === null;
}
