/**
 * One load-generator process: a simulator Fleet (@sdk/simulator) of the devices it is given,
 * driven over IPC by run.ts. The devices reconnect on their own with the simulator's backoff.
 */
import { Fleet } from "@sdk/simulator";
import { wallMs } from "../lib/clock.ts";
import type { FromWorker, ToWorker, WorkerStatus } from "./messages.ts";

let fleet: Fleet | undefined;
/**
 * Since the last mark, for each device's first welcome: when it came, and when the attempt that got
 * it dialled.
 */
let timeline = { welcomes: [] as number[], dialed: [] as number[] };
let welcomedSinceMark = new Set<object>();
const counters = { online: 0, attempts: 0, welcomes: 0, disconnects: 0 };
const errors = new Map<string, number>();

function reply(message: FromWorker): void {
  process.send?.(message);
}

function track(f: Fleet): void {
  for (const device of f.devices) {
    let online = false;
    let dialedAt = 0;
    device.on("connecting", () => {
      dialedAt = wallMs();
      counters.attempts++;
    });
    device.on("connected", () => {
      if (!welcomedSinceMark.has(device)) {
        welcomedSinceMark.add(device);
        timeline.welcomes.push(wallMs());
        timeline.dialed.push(dialedAt);
      }
      counters.welcomes++;
      if (!online) counters.online++;
      online = true;
    });
    device.on("disconnected", () => {
      counters.disconnects++;
      if (online) counters.online--;
      online = false;
    });
    device.on("error", (error) => {
      const key = error.message.slice(0, 100);
      errors.set(key, (errors.get(key) ?? 0) + 1);
    });
  }
}

async function start(message: Extract<ToWorker, { type: "start" }>): Promise<void> {
  fleet = new Fleet(
    message.devices.map((d) => ({ server: message.server, deviceId: d.deviceId, secret: d.secret })),
    { concurrency: message.concurrency },
  );
  track(fleet);
  const firstDialAt = wallMs();
  const result = await fleet.start();
  reply({
    type: "started",
    firstDialAt,
    connected: result.connected,
    failed: result.failed.length,
    elapsedMs: result.elapsedMs,
  });
}

function status(): WorkerStatus {
  return {
    type: "status",
    ...counters,
    welcomedSinceMark: welcomedSinceMark.size,
    errors: Object.fromEntries(errors),
  };
}

process.on("message", (message: ToWorker) => {
  switch (message.type) {
    case "start":
      void start(message);
      return;
    case "mark":
      timeline = { welcomes: [], dialed: [] };
      welcomedSinceMark = new Set();
      errors.clear();
      return;
    case "status":
      reply(status());
      return;
    case "timeline":
      reply({ type: "timeline", ...timeline });
      return;
    case "stop":
      fleet?.kill();
      reply({ type: "stopped" });
      setTimeout(() => process.exit(0), 100);
      return;
  }
});

// Never outlive run.ts.
process.on("disconnect", () => process.exit(0));
reply({ type: "ready" });
