import assert from "node:assert/strict";
import { test } from "node:test";
import { FakeServer } from "@sdk/conformance";
import { Fleet, runMany, type SimulatedDeviceOptions } from "../src/index.ts";

test("runMany connects a fleet with bounded handshake concurrency and stops it cleanly", async (t) => {
  const count = 40;
  const credentials = Object.fromEntries(
    Array.from({ length: count }, (_, i) => [`dev_${i}`, `secret-${i}`]),
  );
  const server = await FakeServer.start({ credentials });
  t.after(() => server.close());
  const options: SimulatedDeviceOptions[] = Object.keys(credentials).map((deviceId, i) => ({
    server: server.address,
    deviceId,
    secret: credentials[deviceId]!,
    board: i % 2 ? "pico2_w" : "pico_w",
  }));
  options.push({ server: server.address, deviceId: "dev_intruder", secret: "guess", reconnect: false });

  const fleet = new Fleet(options, { concurrency: 8 });
  t.after(() => fleet.stop());
  let inFlight = 0;
  let maxInFlight = 0;
  for (const device of fleet.devices) {
    device.on("connecting", () => {
      maxInFlight = Math.max(maxInFlight, ++inFlight);
    });
    device.on("connected", () => inFlight--);
    device.on("authFailed", () => inFlight--);
  }
  const result = await fleet.start();
  assert.ok(maxInFlight <= 8 && maxInFlight >= 2, `${maxInFlight} handshakes in flight at most`);
  assert.equal(result.connected, count);
  assert.deepEqual(result.failed, [{ deviceId: "dev_intruder", reason: "Invalid device credentials" }]);
  assert.equal(fleet.connectedCount, count);
  assert.equal(server.connections.length, count);
  assert.deepEqual(new Set(server.connections.map((c) => c.hello?.board)), new Set(["pico_w", "pico2_w"]));

  const conn = server.connections.find((c) => c.deviceId === "dev_7")!;
  await conn.ok("gpio_write", { pin: "LED", value: 1 });
  assert.equal(fleet.device("dev_7")?.led, 1);
  assert.equal(fleet.device("dev_8")?.led, 0);

  await fleet.stop();
  const closes = await Promise.all(server.connections.map((c) => c.closed));
  assert.ok(closes.every((c) => c.code === 1000));
  assert.equal(fleet.connectedCount, 0);
});

test("runMany starts and reports in one call", async (t) => {
  const server = await FakeServer.start({ credentials: { a: "1", b: "2" } });
  t.after(() => server.close());
  const { fleet, result } = await runMany([
    { server: server.address, deviceId: "a", secret: "1" },
    { server: server.address, deviceId: "b", secret: "2" },
  ]);
  t.after(() => fleet.stop());
  assert.equal(result.connected, 2);
  assert.deepEqual(result.failed, []);
  assert.ok(result.elapsedMs >= 0);
});
