// The board's pins as the server knows them: from the commands it sent and gpio_change events,
// over REST (GET …/pins) and the watch socket (`pins` events, asked for with ?pins=true: a watcher
// that does not ask gets the spec's three kinds only).
import assert from "node:assert/strict";
import { test } from "node:test";
import { watchDevice } from "@sdk/client";
import type { PinState, WatchEvent } from "@sdk/protocol";
import { waitUntil } from "@sdk/test-helpers";
import { scriptProject } from "./helpers/script-project.ts";

test("pins: commands and gpio_change events show on REST and the watch socket; other users get 404", async (t) => {
  const s = await scriptProject(t);
  const { client, auth } = s;
  const { sim, ids: params } = await s.onlineDevice();
  assert.deepEqual(await client.api.getDevicePins({ params }), [], "nothing known yet");

  const events: WatchEvent[] = [];
  const watch = watchDevice(s.url, auth.token!.token, params, { pins: true, onEvent: (e) => events.push(e) });
  t.after(() => watch.stop());
  const plain: WatchEvent[] = [];
  const plainWatch = watchDevice(s.url, auth.token!.token, params, { onEvent: (e) => plain.push(e) });
  t.after(() => plainWatch.stop());
  await waitUntil(
    () => [events, plain].every((list) => list.some((e) => e.type === "snapshot")),
    10_000,
    "the watch snapshots",
  );

  const command = (type: string, args: Record<string, unknown>) =>
    client.api.sendDeviceCommand({ params, body: { type, args } });
  await command("gpio_write", { pin: "LED", value: 1 });
  await command("pin_mode", { pin: 15, mode: "input", pull: "up" });
  await command("gpio_watch", { pin: 15, edge: "both", debounceMs: 5 });
  await command("pwm", { pin: 2, frequency: 1000, duty: 0.25 });
  sim.setInput(15, 0);

  const byPin = (pins: PinState[]) => Object.fromEntries(pins.map(({ updatedAt: _, ...p }) => [p.pin, p]));
  const expected = {
    LED: { pin: "LED", mode: "output", pull: null, level: 1, watch: null, pwm: null },
    15: { pin: 15, mode: "input", pull: "up", level: 0, watch: { edge: "both", debounceMs: 5 }, pwm: null },
    2: { pin: 2, mode: "pwm", pull: null, level: null, watch: null, pwm: { frequency: 1000, duty: 0.25 } },
  };
  await waitUntil(
    async () => byPin(await client.api.getDevicePins({ params }))[15]?.level === 0,
    10_000,
    "the gpio_change of pin 15 is known",
  );
  const pins = await client.api.getDevicePins({ params });
  assert.deepEqual(byPin(pins), expected);
  assert.deepEqual(
    pins.map((p) => p.pin),
    ["LED", 2, 15],
    "the LED first, then GPIOs in order",
  );
  await waitUntil(
    () => {
      const last = events.filter((e) => e.type === "pins").at(-1);
      return last?.type === "pins" && JSON.stringify(byPin(last.pins)) === JSON.stringify(expected);
    },
    10_000,
    "the watcher's last pins event holds the same",
  );

  // Another user cannot see the pins.
  const other = await s.user();
  await assert.rejects(other.client.api.getDevicePins({ params }), { code: "not_found" });

  // Offline: nothing is known any more.
  await sim.stop();
  await waitUntil(
    async () => (await client.api.getDevice({ params })).status === "offline",
    10_000,
    "offline",
  );
  assert.deepEqual(await client.api.getDevicePins({ params }), []);

  // The watcher that did not ask: its offline status comes after every pins change, and no pins event.
  await waitUntil(
    () => plain.some((e) => e.type === "status" && e.status === "offline"),
    10_000,
    "the default watcher's offline status",
  );
  assert.deepEqual(
    [...new Set(plain.map((e) => e.type))].filter(
      (type) => !["snapshot", "status", "log", "state"].includes(type),
    ),
    [],
    "a default watcher gets only the spec's kinds",
  );

  // A command answered just after the disconnect tells nothing about an offline board.
  const published: unknown[] = [];
  t.after(s.server.bus.subscribe("device.pins", (e) => void published.push(e)));
  s.server.services.devicePins.recordCommand(params, "gpio_write", { pin: 15, value: 1 }, {});
  assert.deepEqual(await client.api.getDevicePins({ params }), []);
  assert.deepEqual(published, [], "no pins event for an offline device");
});
