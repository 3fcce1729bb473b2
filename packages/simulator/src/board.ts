import { type Board, boards, checkCommand } from "@sdk/protocol";
import { CommandError } from "./errors.ts";

/**
 * The board's rules for a command's arguments (the protocol's `checkCommand`: pins the board has,
 * `LED` only where a plain digital pin is meant, ADC and bus pins per the board's tables, ranges).
 * Throws a CommandError("invalid_argument").
 */
export function checkPins(board: Board, type: string, args: Record<string, unknown>): void {
  const problem = checkCommand(board, type, args);
  if (problem) throw new CommandError("invalid_argument", problem);
}

/** Throws a RangeError unless `pin` is a header GPIO of the board (library-side checks). */
export function assertGpio(board: Board, pin: number): void {
  if (!(boards[board].gpios as readonly number[]).includes(pin)) {
    throw new RangeError(`GP${pin} is not a usable GPIO on the ${boards[board].name}`);
  }
}
