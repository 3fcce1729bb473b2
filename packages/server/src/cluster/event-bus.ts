import {
  type DeviceEvent,
  type DeviceEventHandler,
  type EventBus,
  type EventType,
  type Handler,
  InProcessEventBus,
  type ServerEvents,
  type SubscribeOptions,
  type Unsubscribe,
} from "../events/bus.ts";
import { type Msg, type NatsConnection, NatsLink, type Subscription, subjectToken } from "./nats.ts";

/** What travels between instances: the event as published. */
interface Envelope {
  type: EventType;
  payload: Record<string, unknown>;
}

type Remote = (event: Envelope) => void | Promise<void>;

/** One NATS subscription and the handlers of this instance that asked for it. */
interface Interest {
  subscription: Subscription;
  handlers: Set<{ deliver: Remote }>;
}

/**
 * The event bus of a cluster instance (docs/scaling.md). An event published here reaches every
 * subscriber here first, exactly as in one process (InProcessEventBus does that), then goes to
 * NATS as JSON on `<cluster>.ev.<type>.<projectId|_>.<deviceId|_>` (a type is two tokens,
 * `device.log`). The other instances hear it only where they asked to: watch streams (a device's
 * or a project's events) and `{ everywhere: true }` subscribers.
 *
 * Interest-based: an instance subscribes in NATS only to what its handlers want, one subscription
 * per subject however many handlers share it, dropped with the last of them. NATS delivers one
 * publisher's messages in order on each subscription, so a watcher hears a device's events in the
 * order its instance published them.
 *
 * While NATS is unreachable, what is published here waits in the link's outbox and is sent once it
 * is back (cluster/nats.ts); what the others published meanwhile is made up for by a resync from
 * PostgreSQL (cluster/index.ts). An event larger than NATS's max_payload reaches this instance's
 * subscribers only, with a log line.
 */
export class NatsEventBus implements EventBus {
  readonly #local: InProcessEventBus;
  readonly #nc: NatsConnection;
  readonly #link: NatsLink;
  readonly #prefix: string;
  readonly #onError: (error: unknown) => void;
  readonly #interests = new Map<string, Interest>();

  constructor(nc: NatsConnection, clusterName: string, onError: (error: unknown) => void) {
    this.#nc = nc;
    this.#link = NatsLink.of(nc);
    this.#prefix = `${clusterName}.ev`;
    this.#onError = onError;
    this.#local = new InProcessEventBus(onError);
  }

  publish<K extends EventType>(type: K, payload: ServerEvents[K]): Promise<void> {
    const delivered = this.#local.publish(type, payload);
    const { projectId, deviceId } = payload as { projectId?: unknown; deviceId?: unknown };
    const subject = `${this.#prefix}.${type}.${token(projectId)}.${token(deviceId)}`;
    try {
      this.#link.publish(subject, JSON.stringify({ type, payload }), `event ${type}`);
    } catch (error) {
      // A closed connection (the server stopping): this instance's subscribers have it regardless.
      this.#onError(error);
    }
    return delivered;
  }

  subscribe<K extends EventType>(type: K, handler: Handler<K>, options?: SubscribeOptions): Unsubscribe {
    const local = this.#local.subscribe(type, handler);
    if (!options?.everywhere) return local;
    const remote = this.#interest(`${this.#prefix}.${type}.>`, (event) =>
      handler(event.payload as ServerEvents[K]),
    );
    return () => {
      local();
      remote();
    };
  }

  subscribeDevice(deviceId: string, handler: DeviceEventHandler): Unsubscribe {
    const local = this.#local.subscribeDevice(deviceId, handler);
    const remote = this.#interest(`${this.#prefix}.*.*.*.${subjectToken(deviceId)}`, (event) =>
      handler(event as unknown as DeviceEvent),
    );
    return () => {
      local();
      remote();
    };
  }

  subscribeProject(projectId: string, handler: DeviceEventHandler): Unsubscribe {
    const local = this.#local.subscribeProject(projectId, handler);
    const remote = this.#interest(`${this.#prefix}.*.*.${subjectToken(projectId)}.*`, (event) => {
      // Only device events reach a project's watchers (project.renamed names no device).
      if (typeof event.payload.deviceId === "string") return handler(event as unknown as DeviceEvent);
    });
    return () => {
      local();
      remote();
    };
  }

  /**
   * Resolves once NATS has every subscription made so far (a watcher's snapshot is read after it:
   * nothing published after the snapshot's read can be missed). At once while NATS is unreachable:
   * the resync after the reconnect covers that watcher.
   */
  async flush(): Promise<void> {
    if (!this.#link.connected) return;
    try {
      await this.#nc.flush();
    } catch {
      // Disconnected meanwhile: the same.
    }
  }

  /** Adds a handler to the subject's interest, subscribing in NATS for the first one. */
  #interest(subject: string, deliver: Remote): Unsubscribe {
    let interest = this.#interests.get(subject);
    if (!interest) {
      const handlers = new Set<{ deliver: Remote }>();
      const subscription = this.#nc.subscribe(subject, {
        callback: (error, msg) => (error ? this.#onError(error) : this.#dispatch(msg, handlers)),
      });
      interest = { subscription, handlers };
      this.#interests.set(subject, interest);
    }
    const entry = { deliver };
    const { handlers } = interest;
    handlers.add(entry);
    let done = false;
    return () => {
      if (done) return;
      done = true;
      handlers.delete(entry);
      if (handlers.size > 0 || this.#interests.get(subject)?.handlers !== handlers) return;
      this.#interests.delete(subject);
      try {
        interest.subscription.unsubscribe();
      } catch (error) {
        this.#onError(error); // the connection is already closed: nothing to undo
      }
    };
  }

  /** In arrival order; one subscriber's error reaches the error handler, never the others. */
  #dispatch(msg: Msg, handlers: Set<{ deliver: Remote }>): void {
    let event: Envelope;
    try {
      event = msg.json<Envelope>();
    } catch (error) {
      this.#onError(new Error(`unreadable event on ${msg.subject}`, { cause: error }));
      return;
    }
    for (const { deliver } of [...handlers]) {
      try {
        const result = deliver(event);
        if (result instanceof Promise) result.catch(this.#onError);
      } catch (error) {
        this.#onError(error);
      }
    }
  }

  /** Subjects this instance listens to in NATS (tests check that interest comes and goes). */
  get subjects(): string[] {
    return [...this.#interests.keys()];
  }
}

function token(id: unknown): string {
  return typeof id === "string" ? subjectToken(id) : "_";
}
