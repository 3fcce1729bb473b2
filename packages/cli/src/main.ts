import fs from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import type { Command } from "./command.ts";
import { alertsAdd, alertsDeliveries, alertsList, alertsRemove, alertsWebhooks } from "./commands/alerts.ts";
import { login, logout, whoami } from "./commands/auth.ts";
import { backup } from "./commands/backup.ts";
import { build } from "./commands/build.ts";
import { deploy } from "./commands/deploy.ts";
import { dev } from "./commands/dev.ts";
import {
  devicesCommand,
  devicesCreate,
  devicesList,
  devicesMessage,
  devicesTag,
} from "./commands/devices.ts";
import { envList, envSet, envUnset } from "./commands/env.ts";
import { flash } from "./commands/flash.ts";
import { init } from "./commands/init.ts";
import { logs } from "./commands/logs.ts";
import { record } from "./commands/record.ts";
import { status } from "./commands/status.ts";
import { test } from "./commands/test.ts";
import { explain, type Globals } from "./context.ts";
import { CliError, exitCodes, UsageError } from "./errors.ts";
import { Output } from "./output.ts";

const version: string = JSON.parse(
  fs.readFileSync(new URL("../package.json", import.meta.url), "utf8"),
).version;

const commands: Command[] = [
  login,
  logout,
  whoami,
  init,
  build,
  deploy,
  dev,
  test,
  status,
  logs,
  record,
  envList,
  envSet,
  envUnset,
  flash,
  backup,
  devicesList,
  devicesTag,
  devicesCreate,
  devicesCommand,
  devicesMessage,
  alertsList,
  alertsAdd,
  alertsRemove,
  alertsWebhooks,
  alertsDeliveries,
];

const globalOptions = {
  json: { type: "boolean" },
  host: { type: "string" },
  project: { type: "string" },
  dir: { type: "string" },
  help: { type: "boolean", short: "h" },
  version: { type: "boolean", short: "v" },
} as const;

function mainHelp(out: Output, commands: Command[]): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  return [
    `${out.bold("sdk")} ${version} — build, deploy and watch device scripts on your sdk server`,
    "",
    `Usage: sdk <command> [options]`,
    "",
    "Commands:",
    ...commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    "",
    "Options for every command:",
    "  --host <url>      the server (default: the one you logged in to last; or SDK_HOST)",
    "  --project <id>    the server project (default: `project` in ./sdk.ts)",
    "  --dir <path>      the project directory (default: the current one)",
    "  --json            one JSON document on stdout (also: SDK_OUTPUT=json)",
    "  -h, --help        help for a command: sdk <command> --help",
    "  -v, --version     the version",
    "",
    "Credentials: `sdk login` saves them in ~/.sdk/credentials.json. In CI, set SDK_TOKEN (an API",
    "token) and SDK_HOST instead; SDK_TOKEN wins over the file.",
    "Exit codes: 0 success, 1 failure, 2 wrong usage.",
    "Docs: the /docs pages of your server.",
  ].join("\n");
}

function commandHelp(command: Command): string {
  return [
    `${command.summary}.`,
    "",
    `Usage: ${command.usage}`,
    ...(command.details ? ["", command.details] : []),
    ...(command.optionHelp?.length ? ["", "Options:", ...command.optionHelp.map((l) => `  ${l}`)] : []),
    "",
    "Also: --host, --project, --dir, --json (see sdk --help).",
  ].join("\n");
}

function findCommand(
  commands: Command[],
  positionals: string[],
): { command: Command; rest: string[] } | undefined {
  const two = positionals.slice(0, 2).join(" ");
  const byTwo = commands.find((c) => c.name === two);
  if (byTwo) return { command: byTwo, rest: positionals.slice(2) };
  const byOne = commands.find((c) => c.name === positionals[0]);
  return byOne ? { command: byOne, rest: positionals.slice(1) } : undefined;
}

/** Runs `sdk` with these arguments; resolves with the exit code. */
export async function main(
  argv: string[],
  env: Record<string, string | undefined> = process.env,
): Promise<number> {
  const jsonEnv = env.SDK_OUTPUT?.toLowerCase() === "json";
  let out = new Output({ json: jsonEnv || argv.includes("--json"), env });
  let commandName: string | undefined;
  try {
    const first = parseArgs({ args: argv, options: globalOptions, allowPositionals: true, strict: false });
    const positionals = first.positionals;
    if (first.values.version && positionals.length === 0) {
      out.result({ version });
      out.line(version);
      return exitCodes.ok;
    }
    if (positionals.length === 0) {
      if (first.values.help) {
        out.line(mainHelp(out, commands));
        return exitCodes.ok;
      }
      throw new UsageError("Which command? Run sdk --help to see them.");
    }
    if (
      positionals[0] === "env" &&
      (positionals.length === 1 || !["list", "set", "unset"].includes(positionals[1]!))
    ) {
      throw new UsageError("Use sdk env list, sdk env set NAME [VALUE] or sdk env unset NAME", "env");
    }
    const found = findCommand(commands, positionals);
    if (!found)
      throw new UsageError(`Unknown command "${positionals[0]}". Run sdk --help to see the commands.`);
    const { command } = found;
    commandName = command.name;
    if (first.values.help) {
      out.line(commandHelp(command));
      return exitCodes.ok;
    }
    let parsed: ReturnType<typeof parseArgs>;
    try {
      parsed = parseArgs({
        args: argv,
        options: { ...globalOptions, ...command.options },
        allowPositionals: true,
        strict: true,
      });
    } catch (error) {
      throw new UsageError((error as Error).message.replace(/^.*?: /, ""), command.name);
    }
    const values = parsed.values as Record<string, string | boolean | undefined>;
    out = new Output({ json: jsonEnv || Boolean(values.json), env });
    const g: Globals = {
      json: out.json,
      host: values.host as string | undefined,
      project: values.project as string | undefined,
      dir: path.resolve((values.dir as string | undefined) ?? "."),
      env,
      out,
    };
    const args = parsed.positionals.slice(command.name.split(" ").length);
    return await command.run({ args, values, g });
  } catch (raw) {
    out.stopSpinner();
    const error = explain(raw);
    if (error instanceof UsageError) {
      const hint = error.command ? `sdk ${error.command} --help` : "sdk --help";
      if (out.json) out.result({ ok: false, error: { code: "usage", message: error.message } });
      else process.stderr.write(`${out.red("error:")} ${error.message}\n${out.dim(`See: ${hint}`)}\n`);
      return exitCodes.usage;
    }
    if (error instanceof CliError) {
      if (out.json)
        out.result({
          ok: false,
          error: { code: error.code ?? "error", message: error.message, docs: error.docs },
        });
      else {
        const code = error.code ? out.dim(` [${error.code}]`) : "";
        const docs = error.docs ? `\n${out.dim(`See: ${error.docs}`)}` : "";
        process.stderr.write(`${out.red("error:")} ${error.message}${code}${docs}\n`);
      }
      return exitCodes.failure;
    }
    const message = raw instanceof Error ? raw.message : String(raw);
    if (out.json) out.result({ ok: false, error: { code: "internal", message } });
    else process.stderr.write(`${out.red("error:")} ${commandName ? `${commandName}: ` : ""}${message}\n`);
    return exitCodes.failure;
  }
}
