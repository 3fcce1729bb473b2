import { connect, type NatsConnection } from "@nats-io/transport-node";
import type { ClusterConfig } from "../config.ts";

export {
  type Msg,
  type NatsConnection,
  RequestError,
  type Subscription,
  TimeoutError,
} from "@nats-io/transport-node";

interface Log {
  info(message: string): void;
  warn(message: string): void;
  error(obj: { err: unknown }, message: string): void;
}

/** Thrown at boot when no NATS server of NATS_URL answers. */
export class NatsUnreachableError extends Error {
  constructor(server: string, cause: unknown) {
    super(
      `cannot connect to NATS at ${server} (NATS_URL): ${(cause as Error)?.message ?? cause}. ` +
        "Every instance of a cluster needs it: start NATS, or unset NATS_URL to run one server on its own",
      { cause },
    );
    this.name = "NatsUnreachableError";
  }
}

/**
 * The connection options NATS_URL stands for. The client takes no credentials from URLs: the first
 * `user:pass@` (or `token@`) found becomes options, and the servers are listed without them, so no
 * secret reaches a log line or an error message.
 */
export function natsOptions(config: ClusterConfig) {
  let user: string | undefined;
  let pass: string | undefined;
  let token: string | undefined;
  let tls = false;
  const servers = config.natsUrl.split(",").map((raw) => {
    const url = new URL(raw.trim());
    if (url.protocol === "tls:") tls = true;
    if (url.username && user === undefined && token === undefined) {
      if (url.password) {
        user = decodeURIComponent(url.username);
        pass = decodeURIComponent(url.password);
      } else token = decodeURIComponent(url.username);
    }
    return `${url.hostname.includes(":") ? `[${url.hostname}]` : url.hostname}:${url.port || "4222"}`;
  });
  return {
    servers,
    ...(user !== undefined ? { user, pass } : {}),
    ...(token !== undefined ? { token } : {}),
    ...(tls ? { tls: {} } : {}),
  };
}

/**
 * Connects to NATS once, at boot: an unreachable server is a startup error naming it. Afterwards
 * the client reconnects forever (events published meanwhile are buffered, then sent) and every
 * change of state is logged. `noEcho`: an instance never hears what it published itself (it has
 * delivered it locally already).
 */
export async function connectNats(config: ClusterConfig, log: Log): Promise<NatsConnection> {
  let nc: NatsConnection;
  try {
    nc = await connect({
      ...natsOptions(config),
      name: `sdk ${config.name} ${config.instanceId}`,
      noEcho: true,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 1_000,
      timeout: 5_000,
    });
  } catch (error) {
    throw new NatsUnreachableError(config.natsServer, error);
  }
  log.info(`cluster ${config.name}: instance ${config.instanceId} connected to NATS at ${nc.getServer()}`);
  void (async () => {
    for await (const status of nc.status()) {
      switch (status.type) {
        case "disconnect":
          log.warn(`NATS: disconnected from ${status.server}; reconnecting (events meanwhile are buffered)`);
          break;
        case "reconnecting":
          break; // every attempt: the disconnect line said so once
        case "reconnect":
          log.info(`NATS: reconnected to ${status.server}`);
          break;
        case "error":
          log.error({ err: status.error }, "NATS: error");
          break;
        case "slowConsumer":
          log.warn(
            `NATS: this instance is not keeping up with ${status.sub.getSubject()} (${status.pending} pending)`,
          );
          break;
        case "ldm":
          log.warn(`NATS: ${status.server} is going into lame duck mode; moving to another server`);
          break;
        case "staleConnection":
          log.warn("NATS: the connection went stale; reconnecting");
          break;
      }
    }
  })().catch((err: unknown) => log.error({ err }, "NATS: status watch failed"));
  return nc;
}

/**
 * A subject token for an id: ids are `prj_…`/`dev_…` and stay as they are; anything else (a `.`,
 * a wildcard, `_`, which stands for "none") is encoded.
 */
export function subjectToken(value: string): string {
  return value !== "_" && /^[A-Za-z0-9_-]+$/.test(value)
    ? value
    : `~${Buffer.from(value).toString("base64url")}`;
}
