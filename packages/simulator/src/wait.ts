import type { Emitter } from "./emitter.ts";

/** How long `waitFor` waits by default: a guard against a hang, not a promise of speed. */
export const defaultWaitMs = 15_000;

/** Resolves with the next `event` payload that passes `filter`; rejects after `timeoutMs`. */
export function waitForEvent<Events extends object, E extends keyof Events>(
  emitter: Emitter<Events>,
  event: E,
  filter: ((payload: Events[E]) => boolean) | undefined,
  timeoutMs: number,
): Promise<Events[E]> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      off();
      reject(new Error(`timed out after ${timeoutMs} ms waiting for "${String(event)}"`));
    }, timeoutMs);
    const off = emitter.on(event, (payload) => {
      if (filter && !filter(payload)) return;
      clearTimeout(timer);
      off();
      resolve(payload);
    });
  });
}

/**
 * Resolves once `condition()` holds. It is checked at once, after every event the emitter emits
 * (state changes caused by the server always end with one), and every 25 ms as a fallback.
 */
export function waitForCondition<Events extends object>(
  emitter: Emitter<Events>,
  condition: () => boolean,
  timeoutMs: number,
): Promise<void> {
  if (condition()) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const done = (error?: Error) => {
      clearTimeout(timer);
      clearInterval(poll);
      off();
      if (error) reject(error);
      else resolve();
    };
    const check = () => {
      try {
        if (condition()) done();
      } catch (error) {
        done(error as Error);
      }
    };
    const timer = setTimeout(
      () => done(new Error(`timed out after ${timeoutMs} ms waiting for a condition`)),
      timeoutMs,
    );
    const poll = setInterval(check, 25);
    const off = emitter.onAny(check);
  });
}
