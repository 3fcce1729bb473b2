import type { TestContext } from "node:test";
import { type FakeConnection, FakeServer, type FakeServerOptions } from "@sdk/conformance";
import { SimulatedDevice, type SimulatedDeviceOptions } from "../../src/index.ts";

export const deviceId = "dev_test1";
export const secret = "s3cret-s3cret";

/** A fake server and a device connected to it (welcome received); both are closed after the test. */
export async function connectedDevice(
  t: TestContext,
  options: Partial<SimulatedDeviceOptions> = {},
  serverOptions: Partial<FakeServerOptions> = {},
): Promise<{ server: FakeServer; device: SimulatedDevice; conn: FakeConnection }> {
  const server = await FakeServer.start({ credentials: { [deviceId]: secret }, ...serverOptions });
  const device = new SimulatedDevice({
    server: server.address,
    deviceId,
    secret,
    reconnect: { baseMs: 10, capMs: 200 },
    ...options,
  });
  t.after(async () => {
    await device.stop();
    await server.close();
  });
  const connected = device.waitFor("connected");
  device.start();
  await connected;
  const conn = await server.nextConnection();
  return { server, device, conn };
}
