import { SimulatedDevice } from "./device.ts";
import type { SimulatedDeviceOptions } from "./types.ts";

export interface FleetOptions {
  /** Handshakes in flight at once (default 50), so a large fleet ramps up instead of flooding. */
  concurrency?: number;
  /** How long start() waits for each device's first attempt to succeed or fail (default 30 000 ms). */
  attemptTimeoutMs?: number;
}

export interface FleetStartResult {
  connected: number;
  /** Devices whose first attempt failed (they keep retrying in the background). */
  failed: { deviceId: string; reason: string }[];
  elapsedMs: number;
}

/** Many simulated devices, started with bounded handshake concurrency (for benchmarks). */
export class Fleet {
  readonly devices: SimulatedDevice[];
  readonly #concurrency: number;
  readonly #attemptTimeoutMs: number;

  constructor(options: readonly SimulatedDeviceOptions[], fleetOptions: FleetOptions = {}) {
    this.devices = options.map((o) => new SimulatedDevice(o));
    this.#concurrency = Math.max(1, fleetOptions.concurrency ?? 50);
    this.#attemptTimeoutMs = fleetOptions.attemptTimeoutMs ?? 30_000;
  }

  get connectedCount(): number {
    return this.devices.filter((d) => d.connected).length;
  }

  device(deviceId: string): SimulatedDevice | undefined {
    return this.devices.find((d) => d.deviceId === deviceId);
  }

  /** Starts every device; resolves once each one's first attempt got welcome or failed. */
  async start(): Promise<FleetStartResult> {
    const started = performance.now();
    const failed: FleetStartResult["failed"] = [];
    let next = 0;
    const worker = async () => {
      while (next < this.devices.length) {
        const device = this.devices[next++]!;
        const outcome = await firstOutcome(device, this.#attemptTimeoutMs);
        if (outcome !== null) failed.push({ deviceId: device.deviceId, reason: outcome });
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.#concurrency, this.devices.length) }, worker));
    return {
      connected: this.devices.length - failed.length,
      failed,
      elapsedMs: Math.round(performance.now() - started),
    };
  }

  /** Closes every connection cleanly (1000). */
  async stop(): Promise<void> {
    await Promise.all(this.devices.map((d) => d.stop()));
  }

  /** Drops every TCP socket without a close frame. */
  kill(): void {
    for (const device of this.devices) device.kill();
  }
}

/** Starts a device; resolves null when welcomed, else why the first attempt failed. */
function firstOutcome(device: SimulatedDevice, timeoutMs: number): Promise<string | null> {
  return new Promise((resolve) => {
    let lastError = "connection failed";
    const offs = [
      device.on("error", (error) => {
        lastError = error.message;
      }),
      device.once("connected", () => done(null)),
      device.once("authFailed", (failure) => done(failure.message)),
      device.once("reconnecting", () => done(lastError)),
      device.once("idle", () => done(lastError)),
    ];
    const timer = setTimeout(() => done(`no answer within ${timeoutMs} ms`), timeoutMs);
    function done(outcome: string | null) {
      clearTimeout(timer);
      for (const off of offs) off();
      resolve(outcome);
    }
    device.start();
  });
}

/** Creates a fleet and starts it; `result` says how the first attempts went. */
export async function runMany(
  options: readonly SimulatedDeviceOptions[],
  fleetOptions: FleetOptions = {},
): Promise<{ fleet: Fleet; result: FleetStartResult }> {
  const fleet = new Fleet(options, fleetOptions);
  const result = await fleet.start();
  return { fleet, result };
}
