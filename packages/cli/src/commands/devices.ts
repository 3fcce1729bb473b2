import fs from "node:fs";
import path from "node:path";
import { SdkApiError, type SdkClient } from "@sdk/client";
import { bulkDeviceLimits, type Device, tagLimits, tagPattern } from "@sdk/protocol";
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
