import assert from "node:assert/strict";
import { test } from "node:test";
import { deployScript as deploy, waitUntil } from "@sdk/test-helpers";
import { AppError } from "../src/errors.ts";
import type { RoutedDevice, RoutedRequest } from "../src/link/command-router.ts";
import { scriptProject } from "./helpers/script-project.ts";

/**
 * Every command, raw message and script message goes through the command router to the instance
 * serving the device (one process: here). The router's handler is wrapped to see what goes through.
 */
function spy(s: Awaited<ReturnType<typeof scriptProject>>) {
  const { router, serveRouted } = s.server.services;
  const seen: (RoutedRequest & { deviceId: string })[] = [];
  let fail: ((request: RoutedRequest) => AppError | null) | null = null;
  router.serve(async (device: RoutedDevice, request: RoutedRequest) => {
    seen.push({ ...request, deviceId: device.deviceId });
    const error = fail?.(request);
    if (error) throw error;
    return serveRouted(device, request);
  });
  return {
    seen,
    kinds: () => seen.map((r) => (r.kind === "command" ? `${r.kind} ${r.type} ${r.source}` : r.kind)),
    failWith: (f: typeof fail) => {
      fail = f;
    },
  };
}

test("REST commands, REST messages and a script's commands and DEVICE.send go through the command router", async (t) => {
  const s = await scriptProject(t);
  await deploy(
    t,
    s.client,
    s.project.id,
    `import { DeviceScript, GP26 } from "@sdk/device";
export default class Relay extends DeviceScript {
  async onMessage(msg) {
    if (msg.type !== "sample") return;
    const { volts } = await this.env.DEVICE.adcRead(GP26);
    this.env.DEVICE.send({ type: "volts", volts });
  }
}`,
  );
  const { sim, ids } = await s.runningDevice();
  sim.setVoltage(26, 1.5);
  const routed = spy(s);

  const { value } = await s.client.api.sendDeviceCommand({
    params: ids,
    body: { type: "adc_read", args: { pin: 26 } },
  });
  const volts = (value as { volts: number }).volts;
  assert.ok(Math.abs(volts - 1.5) < 0.01, `${volts} V`);
  assert.deepEqual(await s.client.api.sendDeviceMessage({ params: ids, body: { type: "sample" } }), {
    delivered: true,
  });
  await waitUntil(() => routed.seen.some((r) => r.kind === "raw"), 10_000, "the script's DEVICE.send");
  assert.deepEqual(routed.kinds(), ["command adc_read api", "message", "command adc_read script", "raw"]);
  assert.ok(routed.seen.every((r) => r.deviceId === ids.deviceId));
  assert.deepEqual(routed.seen[3], {
    kind: "raw",
    message: { type: "volts", volts },
    deviceId: ids.deviceId,
  });

  // What the serving instance answers (its errors' codes and messages) is what the caller gets.
  routed.failWith((request) =>
    request.kind === "command"
      ? new AppError("device_timeout", "adc_read: no answer within 10s")
      : new AppError("scripts_busy"),
  );
  await assert.rejects(
    s.client.api.sendDeviceCommand({ params: ids, body: { type: "adc_read", args: { pin: 26 } } }),
    (e: any) =>
      e.status === 504 && e.code === "device_timeout" && e.message === "adc_read: no answer within 10s",
  );
  await assert.rejects(
    s.client.api.sendDeviceMessage({ params: ids, body: { type: "sample" } }),
    (e: any) => e.status === 429 && e.code === "scripts_busy",
  );
});

test("a command's arguments wrong for the registered board are refused before the router; an offline device answers through it", async (t) => {
  const s = await scriptProject(t);
  const { ids } = await s.addDevice();
  const routed = spy(s);
  await assert.rejects(
    s.client.api.sendDeviceCommand({
      params: ids,
      body: { type: "gpio_write", args: { pin: 99, value: 1 } },
    }),
    (e: any) => e.status === 400 && e.code === "invalid_argument",
  );
  assert.deepEqual(routed.kinds(), [], "refused where it was sent: nothing routed");
  await assert.rejects(
    s.client.api.sendDeviceCommand({ params: ids, body: { type: "gpio_write", args: { pin: 2, value: 1 } } }),
    (e: any) => e.status === 409 && e.code === "device_offline",
  );
  await assert.rejects(
    s.client.api.sendDeviceMessage({ params: ids, body: { type: "hi" } }),
    (e: any) => e.status === 409 && e.code === "device_offline",
  );
  assert.deepEqual(routed.kinds(), ["command gpio_write api", "message"]);
});
