import type { EventEmitter } from "node:events";
import os from "node:os";
import { Bonjour } from "bonjour-service";
import type { Extension } from "../app.ts";

/** DNS-SD service type `_sdk._tcp`; `sdk login` browses for it (docs/architecture.md, "Finding the server on the local network"). */
const mdnsServiceType = "sdk";
const socketTimeoutMs = 2_000;
const goodbyeTimeoutMs = 2_000;

/** bonjour-service keeps its multicast-dns socket to itself; its "error" events must be handled. */
function socketOf(bonjour: Bonjour): EventEmitter & {
  query(packet: { questions: { name: string; type: string }[] }, cb: (err?: Error | null) => void): void;
} {
  return (bonjour as unknown as { server: { mdns: ReturnType<typeof socketOf> } }).server.mdns;
}

function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

const isLoopback = (host: string) => host === "localhost" || host === "::1" || host.startsWith("127.");

/**
 * Advertises the server on the local network while it runs: instance `config.mdns.name`, type
 * `_sdk._tcp`, the listening port, TXT `api=v1`, `version`, `name` and `url` (PUBLIC_URL, when
 * set). Withdrawn with goodbye packets (TTL 0) on stop. A network that will not carry multicast
 * costs a warning, never the server.
 */
export const mdnsAdvertiser: Extension = ({ config, logger, version, port }) => {
  let bonjour: Bonjour | undefined;
  const warn = (error: unknown) =>
    logger.warn(
      { err: error },
      `mDNS: not advertising on the local network (${(error as Error).message}); sdk login then needs --host`,
    );
  return {
    name: "mdns",
    async start() {
      if (isLoopback(config.host)) {
        logger.info(`mDNS: not advertised, HOST=${config.host} is reachable from this machine only`);
        return;
      }
      const name = config.mdns.name;
      const txt: Record<string, string> = { api: "v1", version, name };
      if (config.publicUrl) txt.url = config.publicUrl;
      const created = new Bonjour({}, warn);
      bonjour = created;
      try {
        const socket = socketOf(created);
        await within(
          new Promise((resolve, reject) => {
            socket.once("ready", resolve);
            socket.once("error", reject);
          }),
          socketTimeoutMs,
          "opening UDP port 5353",
        );
        socket.on("error", warn);
        // One query for our own name: it fails at once where multicast cannot be sent (no route).
        await within(
          new Promise<void>((resolve, reject) =>
            socket.query(
              { questions: [{ name: `${name}._${mdnsServiceType}._tcp.local`, type: "ANY" }] },
              (err) => (err ? reject(err) : resolve()),
            ),
          ),
          socketTimeoutMs,
          "sending to 224.0.0.251",
        );
        const hostLabel = os.hostname().split(".")[0] || "sdk";
        created.publish({
          name,
          type: mdnsServiceType,
          port: port(),
          host: `${hostLabel}.local`,
          txt,
          probe: false,
        });
        logger.info(`mDNS: advertising "${name}" as _${mdnsServiceType}._tcp on port ${port()}`);
      } catch (error) {
        warn(error);
        bonjour = undefined;
        created.destroy();
      }
    },
    async stop() {
      const advertising = bonjour;
      bonjour = undefined;
      if (!advertising) return;
      try {
        await within(
          new Promise<void>((resolve) => advertising.unpublishAll(() => resolve())),
          goodbyeTimeoutMs,
          "sending the mDNS goodbye",
        );
      } catch (error) {
        logger.warn({ err: error }, "mDNS: goodbye not sent");
      }
      await new Promise<void>((resolve) => advertising.destroy(() => resolve()));
    },
  };
};
