import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import type { DeviceFactory, DeviceUnderTest, PinReading, Rgb } from "./device-under-test.ts";

const hex = (bytes: readonly number[]) => bytes.map((b) => b.toString(16).padStart(2, "0")).join("");

function parseRgb(word: string): Rgb {
  if (!/^[0-9a-f]{6}$/i.test(word)) throw new Error(`not an rrggbb pixel: ${JSON.stringify(word)}`);
  const n = Number.parseInt(word, 16);
  return [(n >> 16) & 0xff, (n >> 8) & 0xff, n & 0xff];
}

function parsePin(words: string[]): PinReading {
  const [level, pwm, frequency, duty] = words;
  if (level !== "0" && level !== "1") throw new Error(`not a pin level: ${words.join(" ")}`);
  if (pwm === undefined) return { level: Number(level) as 0 | 1, pwm: null };
  if (pwm !== "pwm") throw new Error(`unexpected pin reading: ${words.join(" ")}`);
  return { level: Number(level) as 0 | 1, pwm: { frequency: Number(frequency), duty: Number(duty) } };
}

/**
 * A DeviceFactory for a device that runs as a process speaking the control protocol (README.md)
 * on stdin/stdout: `command [...args] --url … --device … --secret … --board … --backoff-base-ms …
 * --backoff-cap-ms …`.
 */
export function controlProcessFactory(command: string, args: readonly string[] = []): DeviceFactory {
  return async (input) => {
    const child = spawn(
      command,
      [
        ...args,
        ...["--url", input.url, "--device", input.deviceId, "--secret", input.secret, "--board", input.board],
        ...["--backoff-base-ms", String(input.timing.backoffBaseMs)],
        ...["--backoff-cap-ms", String(input.timing.backoffCapMs)],
      ],
      { stdio: ["pipe", "pipe", "pipe"] },
    );
    child.stdin.on("error", () => {}); // a process that died is reported by the next answer
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
    });
    const waiting: { resolve: (words: string[]) => void; reject: (error: Error) => void; line: string }[] =
      [];
    const exited = new Promise<void>((resolve) => child.once("close", () => resolve()));
    void exited.then(() => {
      for (const w of waiting.splice(0)) {
        w.reject(new Error(`${command} exited before answering "${w.line}"\nstderr:\n${stderr}`));
      }
    });
    createInterface({ input: child.stdout }).on("line", (line) => {
      const w = waiting.shift();
      if (!w) return;
      const [status, ...words] = line.trim().split(" ");
      if (status === "ok") w.resolve(words);
      else w.reject(new Error(`${command}: "${w.line}" → ${line}`));
    });
    const ask = (line: string) =>
      new Promise<string[]>((resolve, reject) => {
        if (child.exitCode !== null || child.signalCode !== null) {
          reject(new Error(`${command} is not running ("${line}")\nstderr:\n${stderr}`));
          return;
        }
        waiting.push({ resolve, reject, line });
        child.stdin.write(`${line}\n`);
      });

    const device: DeviceUnderTest = {
      async stop() {
        if (child.exitCode === null && child.signalCode === null) {
          const killer = setTimeout(() => child.kill("SIGKILL"), 5_000);
          await ask("stop").catch(() => {});
          await exited;
          clearTimeout(killer);
        }
      },
      setInput: async (pin, level) => void (await ask(`input ${pin} ${level}`)),
      receiveUart: async (uart, bytes) => void (await ask(`uart ${uart} ${hex(bytes)}`)),
      readPin: async (pin) => parsePin(await ask(`pin ${pin}`)),
      readPixels: async (pin) => (await ask(`pixels ${pin}`)).filter(Boolean).map(parseRgb),
      attachI2c: async (bus, address, bytes) => void (await ask(`i2c ${bus} ${address} ${hex(bytes)}`)),
    };
    return device;
  };
}
