import { type SdkClient, watchDevice } from "@sdk/client";
import { type LogEntry, pageLimits } from "@sdk/protocol";
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
  usage: "sdk logs [--device dev_…] [--limit N] [--tail] [--project prj_…] [--json]",
  details:
    "Shows the newest entries, oldest first. With --tail it then streams new entries over the watch WebSocket and reconnects when the connection drops; stop with Ctrl-C. With --json: one JSON document, or with --tail one JSON object per line (NDJSON).",
  options: { device: { type: "string" }, limit: { type: "string" }, tail: { type: "boolean", short: "f" } },
  optionHelp: [
    "--device <id>    one device only (default: every device of the project)",
    `--limit <n>      how many recent entries (default 50, at most ${pageLimits.max})`,
    "--tail, -f       keep streaming new entries",
  ],
  json: true,
  async run({ values, g }) {
    const limit = values.limit === undefined ? 50 : Number(values.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > pageLimits.max)
      throw new UsageError(`--limit must be a number from 1 to ${pageLimits.max}`, "logs");
    const { client, host } = await connect(g);
    const id = await projectId(g);
    const deviceIds = values.device
      ? [(await client.api.getDevice({ params: { projectId: id, deviceId: values.device as string } })).id]
      : (await client.api.listDevices({ params: { projectId: id } })).map((d) => d.id);
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
    if (deviceIds.length === 0) g.out.info("The project has no devices yet; nothing to stream.");
    const seen = new Set(lines.map((l) => l.id));
    const token = client.token;
    // The snapshot confirms the subscription: from then on new lines are shown.
    const subscribed = new Set<string>();
    const handles = deviceIds.map((deviceId) =>
      watchDevice(
        host,
        token,
        { projectId: id, deviceId },
        {
          onEvent(event) {
            if (event.type === "snapshot") {
              if (subscribed.has(deviceId)) return;
              subscribed.add(deviceId);
              if (subscribed.size === deviceIds.length)
                g.out.info(
                  g.out.dim(
                    `Streaming logs of ${deviceIds.length} device${deviceIds.length === 1 ? "" : "s"} (Ctrl-C to stop)`,
                  ),
                );
              return;
            }
            if (event.type !== "log" || seen.has(event.entry.id)) return;
            seen.add(event.entry.id);
            const line = { ...event.entry, deviceId };
            if (g.out.json) g.out.ndjson(line);
            else g.out.logEntry(line, many ? line.deviceId : undefined);
          },
          onClose({ code, willReconnect }) {
            if (willReconnect)
              g.out.info(g.out.dim(`connection to ${deviceId} dropped (${code}); reconnecting…`));
          },
        },
      ),
    );
    await new Promise<void>((resolve) => {
      const stop = () => {
        for (const h of handles) h.stop();
        resolve();
      };
      process.once("SIGINT", stop);
      process.once("SIGTERM", stop);
    });
    return 0;
  },
};
