import type { TestContext } from "node:test";
import { type Board, deviceSocketPath } from "@sdk/protocol";
import type { DeviceFactory, DeviceTiming, DeviceUnderTest } from "./device-under-test.ts";
import { type FakeConnection, FakeServer } from "./fake-server.ts";

export const fakeDeviceId = "dev_conformance";
export const fakeSecret = "conformance-s3cret";

/** Short enough for a quick suite, long enough to tell "waited for the cap" from "retried at once". */
export const testTiming: DeviceTiming = { backoffBaseMs: 20, backoffCapMs: 1_000 };

/** Generous bounds for a busy machine: waits end as soon as the awaited thing happens. */
export const waitMs = 15_000;

export interface OnFakeServer {
  server: FakeServer;
  device: DeviceUnderTest;
  /** The connection that said hello (the first one). */
  conn: FakeConnection;
}

/** A fake server the test controls and a device connected to it; both are closed after the test. */
export async function deviceOnFakeServer(
  t: TestContext,
  factory: DeviceFactory,
  board: Board,
  options: { heartbeatSeconds?: number; secret?: string; awaitHello?: boolean } = {},
): Promise<OnFakeServer> {
  const server = await FakeServer.start({
    credentials: { [fakeDeviceId]: fakeSecret },
    heartbeatSeconds: options.heartbeatSeconds,
  });
  const device = await factory({
    url: `ws://${server.address}${deviceSocketPath}`,
    deviceId: fakeDeviceId,
    secret: options.secret ?? fakeSecret,
    board,
    timing: testTiming,
  });
  t.after(async () => {
    await device.stop();
    await server.close();
  });
  if (options.awaitHello === false) return { server, device, conn: undefined as never };
  const conn = await server.nextConnection(waitMs);
  return { server, device, conn };
}

/**
 * How long after `closedAt` (a performance.now() time) the attempt after the first `seen` came,
 * or null if none came within `windowMs`. Rules of the form "not again before X" need such a
 * window: it is the rule's own time span, not a sleep standing in for an event.
 */
export async function nextAttemptAfter(
  server: FakeServer,
  seen: number,
  closedAt: number,
  windowMs: number,
): Promise<number | null> {
  try {
    await server.waitForAttempts(seen + 1, windowMs);
  } catch {
    return null;
  }
  return server.attempts[seen]!.at - closedAt;
}
