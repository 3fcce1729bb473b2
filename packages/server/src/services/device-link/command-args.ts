import {
  type Board,
  boards,
  type CommandType,
  checkCommand,
  commandSchemas,
  commandTypes,
  describeIssues,
  isSimulatorCommand,
  simulatorCommandSchemas,
} from "@sdk/protocol";
import type { z } from "zod";
import { AppError } from "../../errors.ts";

/** A schema's complaints in one line: `path: message; …` (each field once, naming what it accepts). */
export function issuesLine(error: { issues: z.core.$ZodIssue[] }, input: unknown): string {
  return describeIssues(error.issues, "message", input)
    .map((f) => `${f.path}: ${f.message}`)
    .join("; ");
}

/**
 * The one check of a command and its arguments before it goes to a device (REST and scripts
 * alike): the protocol's `checkCommand` against the board's pin tables — the same check the device
 * library runs inside scripts and the simulator and firmware run on the board — then the schema,
 * which drops unknown fields. Without a board (an unknown device), the schema alone checks the
 * arguments against every board's pins. Throws `invalid_argument`; returns the arguments as the
 * device will receive them.
 */
export function validateCommand(
  board: Board | undefined,
  type: string,
  args: Record<string, unknown>,
): { type: CommandType; args: Record<string, unknown> } {
  if (isSimulatorCommand(type)) return simulatorCommand(board, type, args);
  const problem = board ? checkCommand(board, type, args) : null;
  if (problem) throw new AppError("invalid_argument", problem);
  if (!Object.hasOwn(commandSchemas, type)) {
    throw new AppError(
      "invalid_argument",
      `unknown command ${JSON.stringify(type)}; commands: ${commandTypes.join(", ")}`,
    );
  }
  const parsed = commandSchemas[type as CommandType].safeParse(args);
  if (!parsed.success) throw new AppError("invalid_argument", `${type}: ${issuesLine(parsed.error, args)}`);
  return { type: type as CommandType, args: parsed.data as Record<string, unknown> };
}

/**
 * A simulator-only command (sim_press, sim_input): checked against its schema and the board's
 * GPIOs, then sent as it is; real firmware answers it `unsupported` like any command it lacks.
 */
function simulatorCommand(
  board: Board | undefined,
  type: "sim_press" | "sim_input",
  args: Record<string, unknown>,
) {
  const parsed = simulatorCommandSchemas[type].safeParse(args);
  if (!parsed.success) throw new AppError("invalid_argument", `${type}: ${issuesLine(parsed.error, args)}`);
  const pins: readonly number[] | undefined = board ? boards[board].gpios : undefined;
  if (pins && !pins.includes(parsed.data.pin))
    throw new AppError("invalid_argument", `${type}: GP${parsed.data.pin} is not a GPIO of this board`);
  // Not in the command catalog: the connection sends any type it is given.
  return { type: type as unknown as CommandType, args: parsed.data as Record<string, unknown> };
}
