import { type SimulatorCommandArgs, type SimulatorCommandType, simulatorCommandSchemas } from "@sdk/protocol";
import { invalidArguments } from "./errors.ts";
import type { Hardware } from "./hardware/index.ts";

/** How long sim_press holds a button when not told: longer than any sensible debounce. */
export const defaultHoldMs = 150;

/**
 * sim_press and sim_input (docs/protocol.md, "Simulator-only commands"): a finger on a button or
 * a signal on an input, through the same GPIO model a command or setInput uses, so pulls,
 * watches, edges and debounce apply. Answers null.
 */
export function simulatorCommand(
  hw: Hardware,
  type: SimulatorCommandType,
  raw: Record<string, unknown>,
): null {
  if (type === "sim_press") {
    const { pin, holdMs } = parse(type, raw);
    void hw.gpio.press(pin, holdMs ?? defaultHoldMs);
  } else {
    const { pin, level } = parse(type, raw);
    hw.gpio.drive(pin, level);
  }
  return null;
}

function parse<T extends SimulatorCommandType>(type: T, raw: Record<string, unknown>) {
  const parsed = simulatorCommandSchemas[type].safeParse(raw);
  if (!parsed.success) throw invalidArguments(type, parsed.error.issues, raw);
  return parsed.data as SimulatorCommandArgs<T>;
}
