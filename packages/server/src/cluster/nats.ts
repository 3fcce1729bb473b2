import { connect, type NatsConnection, TimeoutError } from "@nats-io/transport-node";
import type { ClusterConfig } from "../config.ts";

export {
  ClosedConnectionError,
  DrainingConnectionError,
  type Msg,
  type NatsConnection,
  RequestError,
  type Subscription,
} from "@nats-io/transport-node";

/** What the cluster's parts log with (the server's pino logger). */
export interface Log {
  info(message: string): void;
  warn(message: string): void;
  error(obj: { err: unknown }, message: string): void;
}

/** A request that no answer reached in time (the client throws it, or a RequestError caused by it). */
export function timedOut(error: unknown): boolean {
  return error instanceof TimeoutError || (error as Error)?.cause instanceof TimeoutError;
}

/** Thrown at boot when no NATS server of NATS_URL answers. */
export class NatsUnreachableError extends Error {
  constructor(server: string, cause: unknown) {
    const reason = String((cause as Error)?.message ?? cause);
    super(
      `cannot connect to NATS at ${server} (NATS_URL): ${reason}. ` +
        (/authori[sz]ation|authentication|permissions/i.test(reason)
          ? "NATS answered but refused the credentials: check the user and password (or token) in NATS_URL"
          : "Every instance of a cluster needs it: start NATS, or unset NATS_URL to run one server on its own"),
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
    // URL.hostname keeps an IPv6 address's brackets (`[::1]`), as a NATS server list wants it.
    return `${url.hostname}:${url.port || "4222"}`;
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
 * the client reconnects forever and every change of state is logged (what is published meanwhile:
 * NatsLink). `noEcho`: an instance never hears what it published itself (it has
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
          log.warn(
            `NATS: disconnected from ${status.server}; reconnecting (events published meanwhile wait in an outbox of ${outboxLimit})`,
          );
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

/** How many messages wait in a NatsLink's outbox while NATS is unreachable; past it the oldest go. */
export const outboxLimit = 10_000;

const links = new WeakMap<NatsConnection, NatsLink>();

/**
 * What an instance publishes, and whether NATS is reachable now. The NATS client does not keep what
 * is published while it is disconnected (each reconnect attempt discards its buffer), so the link
 * keeps it: while disconnected, messages wait in an outbox of `outboxLimit` (past it the oldest are
 * dropped, counted in one warning line), sent in order once NATS is back, before anything newer.
 * Its `onReconnect` handlers run after that: this instance may have missed what others published
 * meanwhile (cluster/index.ts resyncs from PostgreSQL).
 */
export class NatsLink {
  readonly nc: NatsConnection;
  readonly #log: Log;
  readonly #outbox: { subject: string; data: string }[] = [];
  readonly #reconnected = new Set<() => void>();
  #connected = true;
  #dropped = 0;

  /** The one link of a connection (created with its log by the first caller). */
  static of(nc: NatsConnection, log?: Log): NatsLink {
    let link = links.get(nc);
    if (!link) {
      link = new NatsLink(nc, log ?? consoleLog);
      links.set(nc, link);
    }
    return link;
  }

  private constructor(nc: NatsConnection, log: Log) {
    this.nc = nc;
    this.#log = log;
    void (async () => {
      for await (const status of nc.status()) {
        if (status.type === "disconnect") this.#connected = false;
        else if (status.type === "reconnect") this.#back();
      }
    })().catch((err: unknown) => log.error({ err }, "NATS: status watch failed"));
  }

  /** Whether NATS is reachable now (routed requests are refused at once while it is not). */
  get connected(): boolean {
    return this.#connected && !this.nc.isClosed();
  }

  /** The largest message NATS carries (its server's max_payload; 1 MiB by default). */
  get maxPayload(): number {
    return this.nc.info?.max_payload ?? 1024 * 1024;
  }

  /**
   * Publishes now, or once NATS is back. A message larger than max_payload is not sent: one log
   * line says so (`what` names it). Throws only when the connection is closed (the server stopping).
   */
  publish(subject: string, data: string, what: string): void {
    const bytes = Buffer.byteLength(data);
    if (bytes > this.maxPayload) {
      this.#log.warn(
        `NATS: ${what} not sent to the other instances: ${bytes} bytes is more than the ${this.maxPayload} bytes NATS carries (max_payload)`,
      );
      return;
    }
    // Closed (the server stopping): the client throws, as it says so.
    if ((this.connected && this.#outbox.length === 0) || this.nc.isClosed()) {
      this.nc.publish(subject, data);
      return;
    }
    this.#outbox.push({ subject, data });
    if (this.#outbox.length > outboxLimit) {
      this.#outbox.shift();
      if (this.#dropped++ === 0)
        this.#log.warn(
          `NATS: unreachable, and more than ${outboxLimit} events wait to be sent: the oldest are dropped (counted when NATS is back)`,
        );
    }
  }

  /** Runs after each reconnect, once the outbox is sent. Returns the unsubscribe. */
  onReconnect(handler: () => void): () => void {
    this.#reconnected.add(handler);
    return () => void this.#reconnected.delete(handler);
  }

  #back(): void {
    const waiting = this.#outbox.length;
    try {
      while (this.#outbox.length > 0) {
        const next = this.#outbox[0] as { subject: string; data: string };
        this.nc.publish(next.subject, next.data);
        this.#outbox.shift();
      }
    } catch (err) {
      // Gone again already: what is left waits for the next reconnect.
      this.#log.error({ err }, "NATS: sending the outbox failed");
      return;
    }
    this.#connected = true;
    if (waiting > 0 || this.#dropped > 0)
      this.#log.info(
        `NATS: ${waiting} event(s) published while unreachable sent` +
          (this.#dropped > 0 ? `; ${this.#dropped} older one(s) were dropped (outbox full)` : ""),
      );
    this.#dropped = 0;
    for (const handler of [...this.#reconnected]) {
      try {
        handler();
      } catch (err) {
        this.#log.error({ err }, "NATS: a reconnect handler failed");
      }
    }
  }
}

const consoleLog: Log = {
  info: () => {},
  warn: (message) => console.warn(message),
  error: ({ err }, message) => console.error(message, err),
};
