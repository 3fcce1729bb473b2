import { type SdkClient, watchProject } from "@sdk/client";
import { type LogEntry, pageLimits, tagPattern, watchCloseCodes } from "@sdk/protocol";
import type { Command } from "../command.ts";
import { connect, projectId } from "../context.ts";
import { UsageError } from "../errors.ts";

interface Line extends LogEntry {
  deviceId: string;
}

async function recent(
  client: SdkClient,
  projectId: string,
  deviceIds: string[],
  limit: number,
): Promise<Line[]> {
  const lists = await Promise.all(
    deviceIds.map(async (deviceId) =>
      (await client.api.listDeviceLogs({ params: { projectId, deviceId }, query: { limit } })).map((l) => ({
        ...l,
        deviceId,
      })),
    ),
  );
  return lists
    .flat()
    .sort((a, b) => (a.id < b.id ? -1 : 1))
    .slice(-limit);
}

export const logs: Command = {
  name: "logs",
  summary: "Recent logs of the project's devices; --tail keeps streaming",
  usage: "sdk logs [--device dev_…] [--tag TAG] [--limit N] [--tail] [--project prj_…] [--json]",
  details:
    "Shows the newest entries, oldest first. With --tail it then streams new entries of every device of the project, devices added later included, over the project watch WebSocket, and reconnects when the connection drops; stop with Ctrl-C. With --tag, only devices with that tag: with --tail a device that gets the tag while streaming joins, and one that loses it leaves. With --json: one JSON document, or with --tail one JSON object per line (NDJSON).",
  options: {
    device: { type: "string" },
    tag: { type: "string" },
    limit: { type: "string" },
    tail: { type: "boolean", short: "f" },
  },
  optionHelp: [
    "--device <id>    one device only (default: every device of the project, with --tail also those added later)",
    "--tag <tag>      only devices with this tag (with --tail: following tag changes)",
    `--limit <n>      how many recent entries (default 50, at most ${pageLimits.max})`,
    "--tail, -f       keep streaming new entries",
  ],
  json: true,
  async run({ values, g }) {
    const limit = values.limit === undefined ? 50 : Number(values.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > pageLimits.max)
      throw new UsageError(`--limit must be a number from 1 to ${pageLimits.max}`, "logs");
    const tag = values.tag as string | undefined;
    if (tag !== undefined && !tagPattern.test(tag))
      throw new UsageError(`"${tag}" is not a valid tag (lowercase letters, digits, - and _)`, "logs");
    if (tag !== undefined && values.device) throw new UsageError("Give --device or --tag, not both", "logs");
    const { client, host } = await connect(g);
    const id = await projectId(g);
    const deviceIds = values.device
      ? [(await client.api.getDevice({ params: { projectId: id, deviceId: values.device as string } })).id]
      : (await client.api.listDevices({ params: { projectId: id }, ...(tag ? { query: { tag } } : {}) })).map(
          (d) => d.id,
        );
    const lines = await recent(client, id, deviceIds, limit);
    const many = deviceIds.length > 1;
    if (!values.tail) {
      g.out.result({ projectId: id, logs: lines });
      if (lines.length === 0) g.out.line("No log entries yet.");
      for (const line of lines) g.out.logEntry(line, many ? line.deviceId : undefined);
      return 0;
    }
    for (const line of lines)
      g.out.json ? g.out.ndjson(line) : g.out.logEntry(line, many ? line.deviceId : undefined);
    const seen = new Set(lines.map((l) => l.id));
    // One project watch: devices created while streaming are included (unless --device is given).
    const known = new Set(deviceIds);
    let subscribed = false;
    let ended: (code: number) => void = () => {};
    const handle = watchProject(host, client.token, id, {
      events: ["log"],
      ...(values.device ? { devices: deviceIds } : {}),
      ...(tag ? { tags: [tag] } : {}),
      onEvent(event) {
        if (event.type === "snapshot") {
          for (const { device } of event.devices) known.add(device.id);
          // The first snapshot confirms the subscription; later ones follow a reconnect.
          if (subscribed) return;
          subscribed = true;
          const n = event.devices.length;
          g.out.info(
            g.out.dim(
              values.device
                ? `Streaming logs of 1 device (Ctrl-C to stop)`
                : tag
                  ? `Streaming logs of ${n} device${n === 1 ? "" : "s"} tagged ${tag}, and of devices tagged later (Ctrl-C to stop)`
                  : `Streaming logs of ${n} device${n === 1 ? "" : "s"}, and of devices added later (Ctrl-C to stop)`,
            ),
          );
          return;
        }
        if (event.type === "device_created") {
          known.add(event.deviceId);
          g.out.info(g.out.dim(`New device ${event.name} (${event.deviceId}): streaming its logs too`));
          return;
        }
        if (event.type === "device_tags") {
          if (!tag) return;
          if (event.tags.includes(tag)) {
            if (!known.has(event.deviceId))
              g.out.info(g.out.dim(`Device ${event.deviceId} was tagged ${tag}: streaming its logs too`));
            known.add(event.deviceId);
          } else if (known.delete(event.deviceId)) {
            g.out.info(g.out.dim(`Device ${event.deviceId} lost the tag ${tag}: no more of its logs`));
          }
          return;
        }
        if (event.type === "device_deleted") {
          known.delete(event.deviceId);
          g.out.info(g.out.dim(`Device ${event.deviceId} was deleted`));
          return;
        }
        if (event.type === "lagged") {
          g.out.warn(`${event.dropped} log entries were skipped (the stream fell behind); see sdk logs`);
          return;
        }
        if (event.type !== "log" || seen.has(event.entry.id)) return;
        seen.add(event.entry.id);
        const line = { ...event.entry, deviceId: event.deviceId };
        if (g.out.json) g.out.ndjson(line);
        else g.out.logEntry(line, !values.device && known.size > 1 ? line.deviceId : undefined);
      },
      onClose({ code, willReconnect }) {
        if (willReconnect) return g.out.info(g.out.dim(`connection dropped (${code}); reconnecting…`));
        if (code === watchCloseCodes.gone) g.out.warn("The project was deleted; the stream ended.");
        else if (code === watchCloseCodes.revoked)
          g.out.warn("The credentials were revoked; the stream ended. Run sdk login again.");
        ended(1);
      },
    });
    return new Promise<number>((resolve) => {
      const finish = (code: number) => {
        process.off("SIGINT", stop);
        process.off("SIGTERM", stop);
        handle.stop();
        resolve(code);
      };
      const stop = () => finish(0);
      ended = finish;
      process.once("SIGINT", stop);
      process.once("SIGTERM", stop);
    });
  },
};
