import type { EventEmitter } from "node:events";
import net from "node:net";
import { Bonjour, type Service } from "bonjour-service";
import { loginUrl, printable } from "./answer.ts";

/** The server advertises `_sdk._tcp` (packages/server/src/extensions/mdns.ts, docs/api.md). */
const serviceType = "sdk";
const apiVersion = "v1";

/** A server that answered on the local network. */
export interface FoundServer {
  /** The instance name (`MDNS_NAME` on the server). */
  name: string;
  /**
   * What to log in to: the server's PUBLIC_URL when it advertises one on the address it answered
   * from, else http://<that address>:<port>. Name and version are stripped of control characters.
   */
  url: string;
  version: string | null;
  /** Every address the server advertised, IPv4 first. */
  addresses: string[];
}

/** Where the answer came from and its IPv4 addresses first; link-local IPv6 needs a zone, so last. */
function preferredHost(service: Service): string {
  const all = [...new Set([service.referer?.address, ...(service.addresses ?? [])])].filter(
    (a): a is string => Boolean(a),
  );
  const v4 = all.find((a) => net.isIPv4(a));
  if (v4) return v4;
  const v6 = all.find((a) => net.isIPv6(a) && !/^fe80:/i.test(a));
  return v6 ? `[${v6}]` : service.host;
}

function toFound(service: Service): FoundServer {
  const txt = (service.txt ?? {}) as Record<string, string | undefined>;
  const addresses = [...(service.addresses ?? [])].sort(
    (a, b) => Number(net.isIPv6(a)) - Number(net.isIPv6(b)),
  );
  // A link-local IPv6 address needs a zone to be used: then the advertised addresses are used.
  const responder = service.referer?.address?.replace(/^fe80:.*/i, "");
  return {
    name: printable(txt.name) || printable(service.name) || "(unnamed)",
    url: responder
      ? loginUrl(txt.url, responder, service.port)
      : `http://${printable(preferredHost(service))}:${service.port}`,
    version: printable(txt.version) || null,
    addresses: addresses.map((a) => printable(a)),
  };
}

/**
 * Asks the local network for `_sdk._tcp` servers (twice, in case a packet is lost) and collects
 * the answers for `ms`. Servers of another API version are left out. Rejects when mDNS cannot be
 * used here at all (UDP port 5353 refused, no route for multicast).
 */
export async function browseServers(ms: number): Promise<FoundServer[]> {
  let failure: Error | undefined;
  const bonjour = new Bonjour({}, (error: Error) => {
    failure ??= error;
  });
  const socket = (bonjour as unknown as { server: { mdns: EventEmitter } }).server.mdns;
  socket.on("error", (error: Error) => {
    failure ??= error;
  });
  const browser = bonjour.find({ type: serviceType });
  const again = setTimeout(() => browser.update(), Math.min(1_000, ms / 2));
  try {
    await new Promise<void>((resolve) => {
      const done = setTimeout(resolve, ms);
      socket.once("error", () => {
        clearTimeout(done);
        resolve();
      });
    });
  } finally {
    clearTimeout(again);
    browser.stop();
    await new Promise<void>((resolve) => bonjour.destroy(() => resolve()));
  }
  if (failure && browser.services.length === 0) throw failure;
  return browser.services
    .filter((s) => (s.txt as { api?: string } | undefined)?.api === apiVersion)
    .map(toFound);
}
