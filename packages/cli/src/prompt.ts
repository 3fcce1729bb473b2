import readline from "node:readline";

/** Reads all of stdin (for `--password-stdin`, `env set NAME` with a pipe). */
export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks)
    .toString("utf8")
    .replace(/\r?\n$/, "");
}

/** Asks a question on the terminal; `hidden` does not echo what is typed. */
export function ask(question: string, hidden = false): Promise<string> {
  return new Promise((resolve, reject) => {
    const rl = readline.createInterface({ input: process.stdin, output: process.stderr, terminal: true });
    if (hidden) {
      const write = (rl as unknown as { _writeToOutput: (s: string) => void })._writeToOutput;
      (rl as unknown as { _writeToOutput: (s: string) => void })._writeToOutput = (s: string) => {
        if (s.startsWith(question)) write.call(rl, question);
        else if (s.includes("\n")) write.call(rl, "\n");
      };
    }
    rl.on("SIGINT", () => {
      rl.close();
      reject(new Error("cancelled"));
    });
    rl.question(question, (answer) => {
      rl.close();
      resolve(answer);
    });
  });
}

export const isInteractive = () => Boolean(process.stdin.isTTY && process.stderr.isTTY);
