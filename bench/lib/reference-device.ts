// What both reference servers do for a device socket: take the device id from the Basic
// credentials (unchecked) and answer hello with a welcome.
import type { Welcome } from "@sdk/protocol";
import { protocolVersion } from "@sdk/protocol/hardware";

/** The user part of `Authorization: Basic …`; "" when there is none. */
export function basicUser(authorization: string | undefined): string {
  const decoded = Buffer.from((authorization ?? "").replace(/^Basic\s+/i, ""), "base64").toString();
  return decoded.slice(0, Math.max(0, decoded.indexOf(":")));
}

/** The welcome frame that answers a device's hello. */
export function welcomeFrame(deviceId: string, heartbeatSeconds: number): string {
  const welcome: Welcome = {
    type: "welcome",
    protocol: protocolVersion,
    deviceId,
    serverTime: new Date().toISOString(),
    heartbeatSeconds,
  };
  return JSON.stringify(welcome);
}
