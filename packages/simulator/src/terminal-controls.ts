import { createInterface } from "node:readline";
import { buttonKey, controlHelp, runControl } from "./control.ts";
import type { SimulatedDevice } from "./device.ts";

export interface TerminalControlsOptions {
  input: NodeJS.ReadStream;
  /** Prints one message (no trailing newline). */
  print: (text: string) => void;
  devices: readonly SimulatedDevice[];
  /** More single keys (on a terminal), with their help line: `sdk dev` adds one. */
  keys?: Record<string, { help: string; run: () => void }>;
}

/** The help for single keys on a terminal. */
function keyHelp(keys: TerminalControlsOptions["keys"]): string {
  return [
    "Keys:",
    `  ${buttonKey.key}   press the button on GP${buttonKey.pin}`,
    ...Object.entries(keys ?? {}).map(([key, { help }]) => `  ${key}   ${help}`),
    "  :   type a command (press 15 300, set 15 0, release 15, help)",
    "  ?   this help",
  ].join("\n");
}

/**
 * Lets a person drive the simulated inputs. On a terminal: single keys (`b` presses GP15, `?`
 * for help, `:` for a command line). Otherwise (a pipe): one control command a line
 * (`press 15`, `set 15 0`, `release 15`). Returns a function that stops listening.
 */
export function attachControls(options: TerminalControlsOptions): () => void {
  const { input, print, devices, keys } = options;
  const run = (line: string) => {
    try {
      const answer = runControl(devices, line, print);
      if (answer) print(answer);
    } catch (error) {
      print((error as Error).message);
    }
  };
  if (!input.isTTY) {
    const lines = createInterface({ input });
    lines.on("line", run);
    return () => {
      lines.close();
      input.pause();
    };
  }

  let typing: string | null = null;
  const onData = (chunk: Buffer) => {
    for (const char of chunk.toString("utf8")) {
      if (char === "\u0003") {
        process.kill(process.pid, "SIGINT");
      } else if (typing !== null) {
        if (char === "\r" || char === "\n") {
          process.stdout.write("\n");
          const line = typing;
          typing = null;
          run(line);
        } else if (char === "\u001b") {
          typing = null;
          process.stdout.write(" (cancelled)\n");
        } else if (char === "\u007f" || char === "\b") {
          if (typing.length > 0) {
            typing = typing.slice(0, -1);
            process.stdout.write("\b \b");
          }
        } else if (char >= " ") {
          typing += char;
          process.stdout.write(char);
        }
      } else if (char === buttonKey.key) {
        run(`press ${buttonKey.pin}`);
      } else if (char === ":") {
        typing = "";
        process.stdout.write(": ");
      } else if (char === "?" || char === "h") {
        print(`${keyHelp(keys)}\n${controlHelp}`);
      } else {
        keys?.[char]?.run();
      }
    }
  };
  input.setRawMode(true);
  input.on("data", onData);
  input.resume();
  return () => {
    input.off("data", onData);
    input.setRawMode(false);
    input.pause();
  };
}

/** One line for the start-up banner: how to find the keys. */
export const controlsHint = (tty: boolean) =>
  tty
    ? `Press ${buttonKey.key} to press the button on GP${buttonKey.pin}, ? for keys.`
    : "Type press 15, set 15 0, release 15 or help (one a line) to drive inputs.";
