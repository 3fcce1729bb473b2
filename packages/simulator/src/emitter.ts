type Handler<T> = (payload: T) => void;
type AnyHandler<Events> = (event: keyof Events, payload: Events[keyof Events]) => void;

/**
 * A small typed event emitter. Unlike Node's EventEmitter, an `error` event without listeners is
 * not fatal; a listener that throws has its exception rethrown on the next tick, so it is not lost.
 */
export class Emitter<Events extends object> {
  readonly #handlers = new Map<keyof Events, Set<Handler<never>>>();
  readonly #any = new Set<AnyHandler<Events>>();

  /** Adds a listener; returns a function that removes it. */
  on<E extends keyof Events>(event: E, handler: Handler<Events[E]>): () => void {
    let set = this.#handlers.get(event);
    if (!set) {
      set = new Set();
      this.#handlers.set(event, set);
    }
    set.add(handler as Handler<never>);
    return () => this.off(event, handler);
  }

  /** Adds a listener called at most once. */
  once<E extends keyof Events>(event: E, handler: Handler<Events[E]>): () => void {
    const off = this.on(event, (payload) => {
      off();
      handler(payload);
    });
    return off;
  }

  off<E extends keyof Events>(event: E, handler: Handler<Events[E]>): void {
    this.#handlers.get(event)?.delete(handler as Handler<never>);
  }

  /** Listens to every event (used by `waitFor` conditions). */
  onAny(handler: AnyHandler<Events>): () => void {
    this.#any.add(handler);
    return () => this.#any.delete(handler);
  }

  protected emit<E extends keyof Events>(event: E, payload: Events[E]): void {
    for (const handler of [...(this.#handlers.get(event) ?? [])]) {
      call(() => (handler as Handler<Events[E]>)(payload));
    }
    for (const handler of [...this.#any]) call(() => handler(event, payload));
  }
}

function call(fn: () => void): void {
  try {
    fn();
  } catch (error) {
    process.nextTick(() => {
      throw error;
    });
  }
}
