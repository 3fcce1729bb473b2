import {
  type DeviceEventHandler,
  type EventBus,
  type Handler,
  InProcessEventBus,
  type SubscribeOptions,
  type Unsubscribe,
} from "../../src/events/bus.ts";
import type { EventType, ServerEvents } from "../../src/events/map.ts";

/**
 * The buses of `n` instances of a cluster, in one process, with the delivery rule of the contract
 * (events/bus.ts): the publishing instance delivers to all its subscribers; the others only to
 * `everywhere` subscribers and to device and project streams. Other instances hear an event later
 * (a macrotask, as over a network): `delivered()` waits until they have.
 */
export function clusterBuses(n: number, onError: (error: unknown) => void = (e) => console.error(e)) {
  const instances: SimulatedBus[] = [];
  let inFlight: Promise<void>[] = [];
  for (let i = 0; i < n; i++) instances.push(new SimulatedBus(onError, instances, (p) => inFlight.push(p)));
  return {
    buses: instances as EventBus[],
    /** Resolves once every event published so far reached the other instances. */
    async delivered(): Promise<void> {
      while (inFlight.length > 0) {
        const waiting = inFlight;
        inFlight = [];
        await Promise.all(waiting);
      }
    },
  };
}

class SimulatedBus implements EventBus {
  /** Every subscriber by type: what this instance's own events reach. */
  readonly #all: InProcessEventBus;
  /** The `everywhere` subscribers: what other instances' events reach. */
  readonly #everywhere: InProcessEventBus;
  /** Device and project streams: every instance's events reach them. */
  readonly #streams: InProcessEventBus;
  readonly #peers: SimulatedBus[];
  readonly #track: (delivery: Promise<void>) => void;

  constructor(onError: (error: unknown) => void, peers: SimulatedBus[], track: (p: Promise<void>) => void) {
    this.#all = new InProcessEventBus(onError);
    this.#everywhere = new InProcessEventBus(onError);
    this.#streams = new InProcessEventBus(onError);
    this.#peers = peers;
    this.#track = track;
  }

  async publish<K extends EventType>(type: K, payload: ServerEvents[K]): Promise<void> {
    for (const peer of this.#peers)
      if (peer !== this)
        this.#track(
          new Promise<void>((resolve) => setImmediate(resolve)).then(() =>
            peer.#fromElsewhere(type, payload),
          ),
        );
    await Promise.all([this.#all.publish(type, payload), this.#streams.publish(type, payload)]);
  }

  async #fromElsewhere<K extends EventType>(type: K, payload: ServerEvents[K]): Promise<void> {
    await Promise.all([this.#everywhere.publish(type, payload), this.#streams.publish(type, payload)]);
  }

  subscribe<K extends EventType>(type: K, handler: Handler<K>, options?: SubscribeOptions): Unsubscribe {
    const offs = [this.#all.subscribe(type, handler)];
    if (options?.everywhere) offs.push(this.#everywhere.subscribe(type, handler));
    return () => {
      for (const off of offs) off();
    };
  }

  subscribeDevice(deviceId: string, handler: DeviceEventHandler): Unsubscribe {
    return this.#streams.subscribeDevice(deviceId, handler);
  }

  subscribeProject(projectId: string, handler: DeviceEventHandler): Unsubscribe {
    return this.#streams.subscribeProject(projectId, handler);
  }
}
