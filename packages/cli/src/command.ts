import type { ParseArgsConfig } from "node:util";
import type { Globals } from "./context.ts";

type OptionSpec = NonNullable<ParseArgsConfig["options"]>;

/** One `sdk` command: its options, help text and what it does. Returns the exit code. */
export interface Command {
  name: string;
  summary: string;
  usage: string;
  /** Paragraphs after the usage line in `--help`. */
  details?: string;
  options?: OptionSpec;
  /** Lines describing the options, for `--help`. */
  optionHelp?: string[];
  /** Accepts `--json` (all do under SDK_OUTPUT=json). */
  json?: boolean;
  run(input: {
    args: string[];
    values: Record<string, string | boolean | undefined>;
    g: Globals;
  }): Promise<number>;
}
