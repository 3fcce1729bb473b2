import type { CommandType, PinState } from "@sdk/protocol";
import type { EventBus, Unsubscribe } from "../events/bus.ts";
import type { Clock } from "../lib/clock.ts";
import type { Repositories } from "../repositories/index.ts";
import type { Principal } from "./auth.ts";
import { type DeviceRef, requireVisibleDevice } from "./device-logs.ts";
import { iso } from "./views.ts";

type Pin = PinState["pin"];
type Level = 0 | 1;

type PinChange = Partial<Omit<PinState, "pin" | "updatedAt">>;

/** Named pins ("LED") first, by name, then GPIO numbers in order. */
const byPin = (a: Pin, b: Pin): number => {
  if (typeof a === "string") return typeof b === "string" ? a.localeCompare(b) : -1;
  return typeof b === "string" ? 1 : a - b;
};

/** What an answered command says about its pin; null for commands that are not about one pin. */
function pinChange(type: CommandType, args: Record<string, unknown>, result: unknown): PinChange | null {
  switch (type) {
    case "pin_mode":
      return {
        mode: args.mode as "input" | "output",
        pull: (args.pull as PinState["pull"]) ?? null,
        pwm: null,
      };
    case "gpio_write":
      return { mode: "output", level: args.value as Level, pwm: null };
    case "gpio_read":
    case "gpio_toggle":
      return { level: (result as { value: Level }).value };
    case "gpio_watch":
      return {
        watch: {
          edge: args.edge as "rising" | "falling" | "both",
          debounceMs: (args.debounceMs as number) ?? null,
        },
      };
    case "gpio_unwatch":
      return { watch: null };
    case "pwm":
      return {
        mode: "pwm",
        level: null,
        pwm: { frequency: args.frequency as number, duty: args.duty as number },
      };
    default:
      return null;
  }
}

/**
 * The pins of each connected board as the server knows them: from the commands it sent (and their
 * answers) and the board's gpio_change events. Kept in memory for the current connection only: a
 * board that reconnects may have restarted, so what was known is dropped at connect and disconnect.
 *
 * In a cluster the instance serving the board learns its pins (its commands run there, routed, and
 * its messages arrive there) and publishes each change as `device.pins` with the whole list; the
 * other instances keep the latest list they heard, so GET pins answers the same on every instance.
 * Connects, disconnects and deletions anywhere drop what was known.
 */
export function devicePinsService(deps: {
  repos: Pick<Repositories, "devices">;
  bus: EventBus;
  clock: Clock;
  /** Whether the device has a live connection to this instance (said hello, not closed since). */
  connected: (deviceId: string) => boolean;
}) {
  const { repos, bus, clock, connected } = deps;
  /** Only devices whose pins something is known of: idle boards are many. */
  const byDevice = new Map<string, Map<Pin, PinState>>();
  let unsubscribe: Unsubscribe[] = [];

  const list = (deviceId: string): PinState[] =>
    [...(byDevice.get(deviceId)?.values() ?? [])].sort((a, b) => byPin(a.pin, b.pin));

  function update(device: DeviceRef, pin: Pin, change: PinChange): void {
    // Not connected (an answer that arrived after the disconnect): nothing to know.
    if (!connected(device.deviceId)) return;
    let pins = byDevice.get(device.deviceId);
    if (!pins) {
      pins = new Map();
      byDevice.set(device.deviceId, pins);
    }
    const now = clock.now();
    const before = pins.get(pin) ?? { pin, mode: null, pull: null, level: null, watch: null, pwm: null };
    pins.set(pin, { ...before, ...change, updatedAt: iso(now) });
    void bus.publish("device.pins", { ...device, at: now, pins: list(device.deviceId) });
  }

  const forget = (deviceId: string): void => {
    byDevice.delete(deviceId);
  };

  return {
    name: "device pins",

    start(): void {
      const everywhere = { everywhere: true };
      unsubscribe = [
        bus.subscribe("device.connected", (e) => forget(e.deviceId), everywhere),
        bus.subscribe("device.disconnected", (e) => forget(e.deviceId), everywhere),
        bus.subscribe("device.deleted", (e) => forget(e.deviceId), everywhere),
        // What the instance serving the device knows (this one's own list is the newest already).
        bus.subscribe(
          "device.pins",
          ({ deviceId, pins }) => {
            if (connected(deviceId)) return;
            if (pins.length === 0) forget(deviceId);
            else byDevice.set(deviceId, new Map(pins.map((p) => [p.pin, p])));
          },
          everywhere,
        ),
        bus.subscribe("device.message", ({ projectId, deviceId, message }) => {
          if (message.type !== "gpio_change") return;
          const { pin, value } = message as { pin?: unknown; value?: unknown };
          if (typeof pin === "number" && (value === 0 || value === 1))
            update({ projectId, deviceId }, pin as Pin, { level: value });
        }),
      ];
    },

    stop(): void {
      for (const off of unsubscribe.splice(0)) off();
      byDevice.clear();
    },

    /** A command the device answered: what it says about a pin. `args` are the validated ones. */
    recordCommand(
      device: DeviceRef,
      type: CommandType,
      args: Record<string, unknown>,
      result: unknown,
    ): void {
      const change = pinChange(type, args, result);
      if (change) update(device, args.pin as Pin, change);
    },

    /** 404 unless the caller may see the device; empty while nothing is known (or it is offline). */
    async get(principal: Principal, device: DeviceRef): Promise<PinState[]> {
      await requireVisibleDevice(repos, principal, device);
      return list(device.deviceId);
    },
  };
}
export type DevicePinsService = ReturnType<typeof devicePinsService>;
