#!/usr/bin/env node
// The simulator behind the conformance suite's control protocol (packages/conformance/README.md):
// the reference for a firmware host build, and the test that the protocol is enough.
import { createInterface } from "node:readline";
import { parseArgs } from "node:util";
import type { Board } from "@sdk/protocol";
import { SimulatedDevice } from "./device.ts";

const { values } = parseArgs({
  options: {
    url: { type: "string" },
    device: { type: "string" },
    secret: { type: "string" },
    board: { type: "string", default: "pico_w" },
    "backoff-base-ms": { type: "string", default: "250" },
    "backoff-cap-ms": { type: "string", default: "30000" },
  },
});
if (!values.url || !values.device || !values.secret) {
  process.stderr.write("usage: control-host --url <url> --device <id> --secret <secret> [--board <board>]\n");
  process.exit(2);
}

const device = new SimulatedDevice({
  server: values.url,
  deviceId: values.device,
  secret: values.secret,
  board: values.board as Board,
  reconnect: { baseMs: Number(values["backoff-base-ms"]), capMs: Number(values["backoff-cap-ms"]) },
});
device.on("error", (error) => process.stderr.write(`${error.message}\n`));
device.start();

const bytes = (hex = "") => {
  if (!/^([0-9a-f]{2})*$/i.test(hex)) throw new RangeError(`not hex bytes: ${hex}`);
  return (hex.match(/../g) ?? []).map((pair) => Number.parseInt(pair, 16));
};
const int = (word = "") => {
  if (!/^\d+$/.test(word)) throw new RangeError(`not a number: ${JSON.stringify(word)}`);
  return Number(word);
};
const bus = (word?: string) => {
  const n = int(word);
  if (n !== 0 && n !== 1) throw new RangeError(`no bus ${n}`);
  return n;
};

/** Runs one control line; returns what follows "ok". */
async function run(words: string[]): Promise<string> {
  const [verb, a, b, c] = words;
  switch (verb) {
    case "input": {
      const level = int(b);
      if (level !== 0 && level !== 1) throw new RangeError(`level must be 0 or 1`);
      device.setInput(int(a), level);
      return "";
    }
    case "uart":
      device.receiveUart(bus(a), bytes(b));
      return "";
    case "pin": {
      const { level, pwm } = device.pin(a === "LED" ? "LED" : int(a));
      return pwm ? `${level} pwm ${pwm.frequency} ${pwm.duty}` : `${level}`;
    }
    case "pixels":
      return (device.pixels(int(a)) ?? [])
        .map((rgb) => rgb.map((v) => v.toString(16).padStart(2, "0")).join(""))
        .join(" ");
    case "i2c": {
      const data = bytes(c);
      device.i2c(bus(a)).attach(int(b), {
        write() {},
        read: (length) => Array.from({ length }, (_, i) => data[i] ?? 0),
      });
      return "";
    }
    case "stop":
      await device.stop();
      return "";
    default:
      throw new RangeError(`unknown control command ${JSON.stringify(verb)}`);
  }
}

const lines = createInterface({ input: process.stdin });
let queue = Promise.resolve();
lines.on("line", (line) => {
  queue = queue.then(async () => {
    const words = line.trim().split(" ");
    try {
      const answer = await run(words);
      process.stdout.write(answer ? `ok ${answer}\n` : "ok\n");
      if (words[0] === "stop") process.exit(0);
    } catch (error) {
      process.stdout.write(`error ${String((error as Error).message).replace(/\s+/g, " ")}\n`);
    }
  });
});
lines.on("close", () => void queue.then(() => device.stop()).then(() => process.exit(0)));
