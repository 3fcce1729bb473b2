import fs from "node:fs";
import path from "node:path";
import { SdkApiError, type SdkClient } from "@sdk/client";
import { bulkDeviceLimits, type Device, tagActionLimits, tagLimits, tagPattern } from "@sdk/protocol";
import type { Command } from "../command.ts";
import { connect, projectId } from "../context.ts";
import { type DeviceFile, formatCredentials, parseDeviceFile } from "../device-file.ts";
import { CliError, reasonOf, UsageError } from "../errors.ts";
import { localTime } from "../output.ts";

const tagRule = `tags are 1–${tagLimits.maxLength} lowercase letters, digits, - or _, starting with a letter or digit; at most ${tagLimits.perDevice} per device`;

function checkTag(tag: string, command: string): string {
  if (!tagPattern.test(tag)) throw new UsageError(`"${tag}" is not a valid tag: ${tagRule}`, command);
  return tag;
}

/** A device named by id (dev_…) or by its exact name in the project. */
async function findDevice(client: SdkClient, projectId: string, ref: string): Promise<Device> {
  if (/^dev_/.test(ref)) return client.api.getDevice({ params: { projectId, deviceId: ref } });
  const matches = (await client.api.listDevices({ params: { projectId } })).filter((d) => d.name === ref);
  if (matches.length === 0) throw new CliError(`No device named "${ref}" in this project`);
  if (matches.length > 1)
    throw new CliError(
      `${matches.length} devices are named "${ref}": use the id (${matches.map((d) => d.id).join(", ")})`,
    );
  return matches[0]!;
}

export const devicesList: Command = {
  name: "devices list",
  summary: "List the project's devices with their status and tags",
  usage: "sdk devices list [--tag TAG] [--project prj_…] [--json]",
  details: "With --tag, only the devices that have that tag.",
  options: { tag: { type: "string" } },
  optionHelp: ["--tag <tag>      only devices with this tag"],
  json: true,
  async run({ values, g }) {
    const tag = values.tag === undefined ? undefined : checkTag(values.tag as string, "devices list");
    const { client } = await connect(g);
    const id = await projectId(g);
    const devices = await client.api.listDevices({
      params: { projectId: id },
      ...(tag ? { query: { tag } } : {}),
    });
    g.out.result({ projectId: id, ...(tag ? { tag } : {}), devices });
    if (devices.length === 0) {
      g.out.line(tag ? `No device has the tag ${tag}.` : "No devices yet.");
      return 0;
    }
    g.out.table(
      ["ID", "NAME", "BOARD", "STATUS", "LAST SEEN", "TAGS"],
      devices.map((d) => [
        d.id,
        d.name,
        d.board,
        d.status,
        d.lastSeenAt ? localTime(d.lastSeenAt) : "never",
        d.tags.join(" "),
      ]),
    );
    return 0;
  },
};

const tagActions = ["add", "remove", "set"] as const;

export const devicesTag: Command = {
  name: "devices tag",
  summary: "Add, remove or set a device's tags",
  usage: "sdk devices tag add|remove|set DEVICE [TAG…] [--project prj_…] [--json]",
  details: `DEVICE is a device id (dev_…) or its name. add keeps the tags the device has; remove takes tags away (one it lacks is ignored); set replaces them all (with no TAG it removes every tag). ${tagRule[0]!.toUpperCase()}${tagRule.slice(1)}.`,
  json: true,
  async run({ args, g }) {
    const [action, ref, ...tags] = args;
    if (!action || !(tagActions as readonly string[]).includes(action))
      throw new UsageError("Which action? sdk devices tag add|remove|set DEVICE [TAG…]", "devices tag");
    if (!ref) throw new UsageError(`Which device? sdk devices tag ${action} DEVICE TAG…`, "devices tag");
    if (action !== "set" && tags.length === 0)
      throw new UsageError(`Which tags? sdk devices tag ${action} ${ref} TAG…`, "devices tag");
    for (const tag of tags) checkTag(tag, "devices tag");
    const { client } = await connect(g);
    const id = await projectId(g);
    const device = await findDevice(client, id, ref);
    const params = { projectId: id, deviceId: device.id };
    let updated = device;
    if (action === "set") updated = await client.api.setDeviceTags({ params, body: { tags } });
    else if (action === "add") updated = await client.api.addDeviceTags({ params, body: { tags } });
    else for (const tag of tags) updated = await client.api.removeDeviceTag({ params: { ...params, tag } });
    g.out.result({ projectId: id, deviceId: updated.id, name: updated.name, tags: updated.tags });
    g.out.line(
      `${g.out.green("✔")} ${updated.name}: ${updated.tags.length > 0 ? updated.tags.join(" ") : "no tags"}`,
    );
    return 0;
  },
};

/**
 * `devices.3.name` from the server → `line 5 (name): …` (CSV: the file's line, the header is line 1)
 * or `row 4 (name): …` (JSON: the device's place in the list) for people editing the file.
 */
function describeRows(error: SdkApiError, fileLines: number[] | undefined): string {
  const fields = error.fields ?? [];
  const lines = fields.map((f) => {
    const m = /^devices\.(\d+)\.?(.*)$/.exec(f.path);
    if (!m) return `  ${f.path}: ${f.message}`;
    const index = Number(m[1]);
    const where = fileLines?.[index] === undefined ? `row ${index + 1}` : `line ${fileLines[index]}`;
    return `  ${where}${m[2] ? ` (${m[2]})` : ""}: ${f.message}`;
  });
  return lines.length > 0 ? `No device was added; fix these rows:\n${lines.join("\n")}` : error.message;
}

export const devicesCreate: Command = {
  name: "devices create",
  summary: "Add many devices from a CSV or JSON file; writes their credentials to a file",
  usage: "sdk devices create --from FILE [--out FILE] [--show-secrets] [--project prj_…] [--json]",
  details: [
    `FILE is CSV with a header row (name,board,tags; tags separated by spaces or ;) or JSON (an array of {"name","board","tags"}). At most ${bulkDeviceLimits.maxDevices} devices per file. The server checks every row first: if any is wrong, no device is added and every bad row is listed (by its line in a CSV file, the header being line 1; by its place in a JSON list). A CSV file that cannot be read (a quote never closed, more fields than the header) is refused with its line before anything is sent.`,
    "The device secrets are shown only this once: they are written to --out (default sdk-credentials-<time>.json; .csv for CSV) with mode 0600, never over an existing file. The file is created before the request, so a path that cannot be written stops the command with nothing added. Should writing still fail (a full disk), the credentials are printed to stdout with a warning and the exit status is 1. Secrets are not printed unless --show-secrets is given.",
  ].join("\n\n"),
  options: { from: { type: "string" }, out: { type: "string" }, "show-secrets": { type: "boolean" } },
  optionHelp: [
    "--from <file>    the devices to add (.csv or .json)",
    "--out <file>     where to write the credentials (.json or .csv; default sdk-credentials-<time>.json)",
    "--show-secrets   also print the secrets (in the table and in --json)",
  ],
  json: true,
  async run({ values, g }) {
    const from = values.from as string | undefined;
    if (!from) throw new UsageError("Which file? sdk devices create --from devices.csv", "devices create");
    let text: string;
    try {
      text = fs.readFileSync(from, "utf8");
    } catch (error) {
      throw new CliError(`Cannot read ${from}: ${reasonOf(error)}`);
    }
    let rows: DeviceFile["rows"];
    let lines: DeviceFile["lines"];
    try {
      ({ rows, lines } = parseDeviceFile(text, from));
    } catch (error) {
      throw new CliError(reasonOf(error));
    }
    if (rows.length === 0) throw new CliError(`${from} lists no devices`);
    const stamp = new Date().toISOString().replace(/[-:]/g, "").replace(/\..*$/, "");
    const out = path.resolve((values.out as string | undefined) ?? `sdk-credentials-${stamp}.json`);
    // The secrets exist only in the server's answer: the file must be ours before anything is created.
    let fd: number;
    try {
      fd = fs.openSync(out, "wx", 0o600);
    } catch (error) {
      const reason =
        (error as NodeJS.ErrnoException).code === "EEXIST"
          ? "it already exists; choose another --out"
          : reasonOf(error);
      throw new CliError(`Cannot create the credentials file ${out}: ${reason}. No device was added.`);
    }
    let created: Awaited<ReturnType<SdkClient["api"]["createDevices"]>>;
    let id: string;
    try {
      const { client } = await connect(g);
      id = await projectId(g);
      created = await client.api.createDevices({
        params: { projectId: id },
        body: { devices: rows } as never,
      });
    } catch (error) {
      fs.closeSync(fd);
      fs.rmSync(out, { force: true });
      if (error instanceof SdkApiError && error.code === "invalid_request")
        throw new CliError(describeRows(error, lines), { code: error.code, docs: error.docs });
      throw error;
    }
    const credentials = formatCredentials(created, out);
    let written = true;
    try {
      fs.writeFileSync(fd, credentials);
      fs.fchmodSync(fd, 0o600);
      fs.fsyncSync(fd);
    } catch (error) {
      written = false;
      g.out.warn(
        `Could not write the credentials to ${out} (${reasonOf(error)}). The ${created.devices.length} devices were added and their secrets are not shown again: they are printed below. Save them now.`,
      );
    } finally {
      fs.closeSync(fd);
    }
    if (!written) fs.rmSync(out, { force: true });

    const show = values["show-secrets"] === true || !written;
    g.out.result({
      projectId: id,
      credentialsFile: written ? out : null,
      devices: created.devices.map(({ device, credentials }) => ({
        ...device,
        ...(show ? { secret: credentials.secret } : {}),
      })),
    });
    if (!written) {
      if (!g.out.json) process.stdout.write(credentials);
      return 1;
    }
    g.out.table(
      show ? ["ID", "NAME", "BOARD", "TAGS", "SECRET"] : ["ID", "NAME", "BOARD", "TAGS"],
      created.devices.map(({ device, credentials }) => [
        device.id,
        device.name,
        device.board,
        device.tags.join(" "),
        ...(show ? [credentials.secret] : []),
      ]),
    );
    g.out.line(
      `${g.out.green("✔")} ${created.devices.length} device${created.devices.length === 1 ? "" : "s"} added; credentials written to ${out} (mode 0600: keep it safe, the secrets are not shown again)`,
    );
    return 0;
  },
};

/** What one device did with a command or message, as the tag endpoints answer it. */
type DeviceAnswer =
  | { ok: true; deviceId: string; name: string; value?: unknown }
  | { ok: false; deviceId: string; name: string; error: { code: string; message: string } };

/** Errors that are about the one device (the same codes a tag answers per device); others stop the command. */
const deviceFailures = new Set([
  "device_offline",
  "device_error",
  "device_timeout",
  "no_script",
  "script_timeout",
]);

/** `--tag TAG` or `--device DEVICE`: exactly one. */
function target(
  values: Record<string, string | boolean | undefined>,
  command: string,
  usage: string,
): { tag: string } | { device: string } {
  const tag = values.tag as string | undefined;
  const device = values.device as string | undefined;
  if ((tag === undefined) === (device === undefined))
    throw new UsageError(`Which devices? Give --tag TAG or --device DEVICE: ${usage}`, command);
  return tag === undefined ? { device: device! } : { tag: checkTag(tag, command) };
}

/** One device's answer through the single-device endpoint, in the tag endpoints' shape. */
async function answerOf(device: Device, send: () => Promise<unknown>): Promise<DeviceAnswer> {
  try {
    return { ok: true, deviceId: device.id, name: device.name, value: await send() };
  } catch (error) {
    if (error instanceof SdkApiError && deviceFailures.has(error.code))
      return {
        ok: false,
        deviceId: device.id,
        name: device.name,
        error: { code: error.code, message: error.message },
      };
    throw error;
  }
}

/** One line per device; exit status 1 when any failed. */
function report(
  g: Parameters<Command["run"]>[0]["g"],
  result: { projectId: string; tag?: string; devices: DeviceAnswer[] },
  withValue: boolean,
): number {
  g.out.result(result);
  if (result.tag !== undefined && result.devices.length === 0) {
    g.out.line(`No device has the tag ${result.tag}: nothing was sent.`);
    return 0;
  }
  for (const d of result.devices) {
    const who = `${d.name} ${g.out.dim(`(${d.deviceId})`)}`;
    if (d.ok)
      g.out.line(
        `${g.out.green("✔")} ${who}: ${withValue ? (JSON.stringify(d.value ?? null) ?? "null") : "delivered"}`,
      );
    else g.out.line(`${g.out.red("✖")} ${who}: ${d.error.code}: ${d.error.message}`);
  }
  const failed = result.devices.filter((d) => !d.ok).length;
  if (failed > 0) {
    g.out.info(
      `${failed} of ${result.devices.length} device${result.devices.length === 1 ? "" : "s"} failed`,
    );
    return 1;
  }
  return 0;
}

const commandUsage = "sdk devices command --tag TAG|--device DEVICE TYPE [--args JSON] [--timeout S]";

export const devicesCommand: Command = {
  name: "devices command",
  summary: "Send a command (gpio_write, …) to every device with a tag, or to one device",
  usage: `${commandUsage} [--project prj_…] [--json]`,
  details: [
    `TYPE is a device command such as gpio_write (docs/protocol.md); --args its arguments as a JSON object, e.g. '{"pin":2,"value":1}'. With --tag every device of the project with that tag gets it, ${tagActionLimits.concurrency} at a time, and the whole must finish within --timeout seconds (default ${tagActionLimits.defaultTimeoutSeconds}, at most ${tagActionLimits.maxTimeoutSeconds}): a device without an answer by then reports device_timeout. With --device (an id or a name) one device gets it, within the server's command timeout.`,
    "Prints one line per device: its answer, or the error code (device_offline, device_timeout, …). Arguments wrong for a board are refused before any device gets the command. The exit status is 1 when any device failed.",
  ].join("\n\n"),
  options: {
    tag: { type: "string" },
    device: { type: "string" },
    args: { type: "string" },
    timeout: { type: "string" },
  },
  optionHelp: [
    "--tag <tag>        every device with this tag",
    "--device <device>  one device, by id (dev_…) or name",
    "--args <json>      the command's arguments, a JSON object (default {})",
    `--timeout <s>      with --tag: overall time limit in seconds (default ${tagActionLimits.defaultTimeoutSeconds})`,
  ],
  json: true,
  async run({ args, values, g }) {
    const to = target(values, "devices command", commandUsage);
    const [type, ...extra] = args;
    if (!type) throw new UsageError(`Which command? ${commandUsage}`, "devices command");
    if (extra.length > 0)
      throw new UsageError(
        `Unexpected ${extra.join(" ")}: give the arguments as --args '{"pin":2,"value":1}'`,
        "devices command",
      );
    let commandArgs: Record<string, unknown> = {};
    if (values.args !== undefined) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(values.args as string);
      } catch (error) {
        throw new UsageError(`--args is not valid JSON: ${reasonOf(error)}`, "devices command");
      }
      if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed))
        throw new UsageError('--args must be a JSON object, e.g. \'{"pin":2,"value":1}\'', "devices command");
      commandArgs = parsed as Record<string, unknown>;
    }
    let timeoutSeconds: number | undefined;
    if (values.timeout !== undefined) {
      if (!("tag" in to))
        throw new UsageError(
          "--timeout is for --tag; one device answers within the server's command timeout",
          "devices command",
        );
      timeoutSeconds = Number(values.timeout);
      if (
        !Number.isInteger(timeoutSeconds) ||
        timeoutSeconds < 1 ||
        timeoutSeconds > tagActionLimits.maxTimeoutSeconds
      )
        throw new UsageError(
          `--timeout must be a whole number of seconds from 1 to ${tagActionLimits.maxTimeoutSeconds}`,
          "devices command",
        );
    }
    const { client } = await connect(g);
    const id = await projectId(g);
    if ("tag" in to) {
      const outcome = await client.api.sendTagCommand({
        params: { projectId: id },
        body: {
          tag: to.tag,
          type,
          args: commandArgs,
          ...(timeoutSeconds === undefined ? {} : { timeoutSeconds }),
        },
      });
      return report(g, { projectId: id, tag: outcome.tag, devices: outcome.devices }, true);
    }
    const device = await findDevice(client, id, to.device);
    const answer = await answerOf(
      device,
      async () =>
        (
          await client.api.sendDeviceCommand({
            params: { projectId: id, deviceId: device.id },
            body: { type, args: commandArgs },
          })
        ).value ?? null,
    );
    return report(g, { projectId: id, devices: [answer] }, true);
  },
};

const messageUsage = "sdk devices message --tag TAG|--device DEVICE JSON";

export const devicesMessage: Command = {
  name: "devices message",
  summary: "Send a message to the script of every device with a tag, or of one device",
  usage: `${messageUsage} [--project prj_…] [--json]`,
  details: [
    `JSON is the message, an object with a lower_snake_case type and any fields, e.g. '{"type":"dim","level":3}'; the device's script gets it in onMessage. With --tag every device of the project with that tag gets it (${tagActionLimits.concurrency} at a time); with --device (an id or a name) one device.`,
    "Prints one line per device: delivered, or the error code (device_offline, no_script, …). The exit status is 1 when any device failed.",
  ].join("\n\n"),
  options: { tag: { type: "string" }, device: { type: "string" } },
  optionHelp: [
    "--tag <tag>        every device with this tag",
    "--device <device>  one device, by id (dev_…) or name",
  ],
  json: true,
  async run({ args, values, g }) {
    const to = target(values, "devices message", messageUsage);
    const [text, ...extra] = args;
    if (!text) throw new UsageError(`Which message? ${messageUsage}`, "devices message");
    if (extra.length > 0)
      throw new UsageError(
        `Unexpected ${extra.join(" ")}: quote the message as one argument, e.g. '{"type":"dim","level":3}'`,
        "devices message",
      );
    let message: unknown;
    try {
      message = JSON.parse(text);
    } catch (error) {
      throw new UsageError(`The message is not valid JSON: ${reasonOf(error)}`, "devices message");
    }
    if (message === null || typeof message !== "object" || Array.isArray(message))
      throw new UsageError(
        'The message must be a JSON object with a type, e.g. \'{"type":"dim","level":3}\'',
        "devices message",
      );
    const { client } = await connect(g);
    const id = await projectId(g);
    if ("tag" in to) {
      const outcome = await client.api.sendTagMessage({
        params: { projectId: id },
        body: { tag: to.tag, message } as never,
      });
      return report(g, { projectId: id, tag: outcome.tag, devices: outcome.devices }, false);
    }
    const device = await findDevice(client, id, to.device);
    const answer = await answerOf(device, async () => {
      await client.api.sendDeviceMessage({
        params: { projectId: id, deviceId: device.id },
        body: message as never,
      });
      return undefined;
    });
    return report(g, { projectId: id, devices: [answer] }, false);
  },
};
