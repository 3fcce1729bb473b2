#!/usr/bin/env node
import fs from "node:fs";
import { type CliCommand, parseCli, UsageError, usage } from "./cli-args.ts";
import type { SimulatedDevice } from "./device.ts";
import { Fleet } from "./fleet.ts";
import { attachControls, controlsHint } from "./terminal-controls.ts";

const clip = (text: string, max = 200) => (text.length > max ? `${text.slice(0, max)}…` : text);
const time = () => new Date().toISOString().slice(11, 23);

function main(): void {
  let command: CliCommand;
  try {
    command = parseCli(process.argv.slice(2), (path) => fs.readFileSync(path, "utf8"));
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`sdk-sim: ${error.message}\nRun "sdk-sim --help" for usage.\n`);
    process.exit(2);
  }
  if (command.kind === "help") {
    process.stdout.write(usage);
    return;
  }

  const fleet = new Fleet(
    command.devices.map((d) => ({ server: command.server, ...d, firmware: command.firmware })),
  );
  const print = (device: SimulatedDevice, line: string) =>
    process.stdout.write(`${time()} [${device.deviceId}] ${line}\n`);
  for (const device of fleet.devices) report(device, command.quiet, (line) => print(device, line));
  process.stdout.write(
    `${time()} sdk-sim: ${command.devices.length} device(s) → ${command.url} (Ctrl-C to stop)\n`,
  );
  void fleet.start();
  const detach = attachControls({
    input: process.stdin,
    print: (text) => process.stdout.write(`${time()} sdk-sim: ${text.replace(/\n/g, "\n  ")}\n`),
    devices: fleet.devices,
  });
  process.stdout.write(`${time()} sdk-sim: ${controlsHint(Boolean(process.stdin.isTTY))}\n`);

  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) process.exit(0);
    stopping = true;
    detach();
    process.stdout.write(`${time()} sdk-sim: ${signal}: closing connections\n`);
    const forced = setTimeout(() => {
      fleet.kill();
      process.exit(0);
    }, 5_000);
    void fleet.stop().then(() => {
      clearTimeout(forced);
      process.exit(0);
    });
  };
  process.on("SIGINT", () => shutdown("SIGINT"));
  process.on("SIGTERM", () => shutdown("SIGTERM"));
}

/** Prints one device's connection changes and, unless quiet, its commands and events. */
function report(device: SimulatedDevice, quiet: boolean, line: (text: string) => void): void {
  device.on("connecting", ({ attempt, url }) => line(`connecting to ${url} (attempt ${attempt})`));
  device.on("connected", (w) =>
    line(`connected (server time ${w.serverTime}, heartbeat ${w.heartbeatSeconds} s)`),
  );
  device.on("disconnected", ({ code, reason }) =>
    line(`disconnected ${code}${reason ? ` (${reason})` : ""}`),
  );
  device.on("reconnecting", ({ delayMs }) => line(`retrying in ${(delayMs / 1000).toFixed(1)} s`));
  device.on("authFailed", ({ message }) => line(`auth failed: ${message}`));
  device.on("error", (error) => {
    if (!("code" in error && error.code === "invalid_device_credentials")) line(`error: ${error.message}`);
  });
  device.on("serverError", ({ code, message }) => line(`server error ${code}: ${message}`));
  if (quiet) return;
  device.on("command", ({ type, args, reply }) => {
    const answer =
      reply === null
        ? "(no answer)"
        : "value" in reply
          ? clip(JSON.stringify(reply.value))
          : `error ${reply.error.code}: ${reply.error.message}`;
    line(`← ${type} ${clip(JSON.stringify(args))} → ${answer}`);
  });
  device.on("sent", (message) => {
    if (message.type === "hello" || message.type === "result" || message.type === "error") return;
    const { type, ...fields } = message;
    line(`→ ${type} ${clip(JSON.stringify(fields))}`);
  });
}

main();
