import type { DeviceEvent, EventType, ServerEvents } from "./map.ts";

export type { DeviceEvent, EventType, Revocation, ServerEvents } from "./map.ts";

export type Handler<K extends EventType> = (payload: ServerEvents[K]) => void | Promise<void>;
export type DeviceEventHandler = (event: DeviceEvent) => void | Promise<void>;
export type Unsubscribe = () => void;

export interface SubscribeOptions {
  /**
   * Also hear the events that other instances of a cluster publish (docs/scaling.md). Default: only
   * this instance's own events, for effects that must happen once per event (the audit log, alerts,
   * Home Assistant, the scripts of the devices this instance serves). Set it where every instance
   * must act: closing sockets (deletions, revocations), env changes, deployments going live.
   * One process hears every event either way.
   */
  everywhere?: boolean;
}

/**
 * Publish/subscribe for every event of the server (events/map.ts). The in-process implementation
 * serves one server; a NATS or PostgreSQL LISTEN/NOTIFY implementation will route between
 * instances (DESIGN.md §8) behind the same interface.
 *
 * A subscriber that throws, or whose promise rejects, is reported to the bus's error handler and
 * never reaches the publisher or the other subscribers.
 */
export interface EventBus {
  /**
   * Delivers the event to every subscriber of its type (and, for device events, of its device).
   * The promise settles once this instance's subscribers have finished with it and never rejects:
   * a request awaits it so that what its subscribers write (the audit log) is readable when it answers.
   */
  publish<K extends EventType>(type: K, payload: ServerEvents[K]): Promise<void>;
  subscribe<K extends EventType>(type: K, handler: Handler<K>, options?: SubscribeOptions): Unsubscribe;
  /**
   * Every event that names this device (a watch socket's stream), from whichever instance published
   * it, in the order its publisher published it.
   */
  subscribeDevice(deviceId: string, handler: DeviceEventHandler): Unsubscribe;
  /**
   * Every event that names a device of this project, devices created later included (a project
   * watch), from whichever instance published it.
   */
  subscribeProject(projectId: string, handler: DeviceEventHandler): Unsubscribe;
  /**
   * Resolves once the subscriptions made so far hear every instance's events (a cluster's NATS
   * server has them): a watcher reads its snapshot after it. Absent in one process (at once).
   */
  flush?(): Promise<void>;
}

const settled: Promise<void> = Promise.resolve();

export class InProcessEventBus implements EventBus {
  readonly #byType = new Map<EventType, Set<Handler<never>>>();
  readonly #byDevice = new Map<string, Set<DeviceEventHandler>>();
  readonly #byProject = new Map<string, Set<DeviceEventHandler>>();
  readonly #onError: (error: unknown) => void;

  constructor(onError: (error: unknown) => void) {
    this.#onError = onError;
  }

  publish<K extends EventType>(type: K, payload: ServerEvents[K]): Promise<void> {
    let pending: Promise<void>[] | undefined;
    const handlers = this.#byType.get(type) as Set<Handler<K>> | undefined;
    if (handlers) for (const handler of [...handlers]) pending = this.#call(handler, payload, pending);
    const { deviceId, projectId } = payload as { deviceId?: unknown; projectId?: unknown };
    if (typeof deviceId === "string") {
      const event = { type, payload } as DeviceEvent;
      const handlers = [
        ...(this.#byDevice.get(deviceId) ?? []),
        ...((typeof projectId === "string" && this.#byProject.get(projectId)) || []),
      ];
      for (const handler of handlers) pending = this.#call(handler, event, pending);
    }
    return pending ? Promise.all(pending).then(() => undefined) : settled;
  }

  /** One broken subscriber must not starve the others, nor fail the publisher. */
  #call<A>(
    handler: (arg: A) => void | Promise<void>,
    arg: A,
    pending: Promise<void>[] | undefined,
  ): Promise<void>[] | undefined {
    try {
      const result = handler(arg);
      if (result instanceof Promise) {
        const list = pending ?? [];
        list.push(result.catch(this.#onError));
        return list;
      }
    } catch (error) {
      this.#onError(error);
    }
    return pending;
  }

  subscribe<K extends EventType>(type: K, handler: Handler<K>, _options?: SubscribeOptions): Unsubscribe {
    return add(this.#byType, type, handler as Handler<never>);
  }

  subscribeDevice(deviceId: string, handler: DeviceEventHandler): Unsubscribe {
    return add(this.#byDevice, deviceId, handler);
  }

  subscribeProject(projectId: string, handler: DeviceEventHandler): Unsubscribe {
    return add(this.#byProject, projectId, handler);
  }
}

function add<Key, H>(map: Map<Key, Set<H>>, key: Key, handler: H): Unsubscribe {
  let set = map.get(key);
  if (!set) {
    set = new Set();
    map.set(key, set);
  }
  set.add(handler);
  return () => {
    set.delete(handler);
    if (set.size === 0 && map.get(key) === set) map.delete(key);
  };
}
