import { setTimeout as sleep } from "node:timers/promises";

/**
 * Resolves once `check()` holds, checking now and then every `intervalMs`; rejects after
 * `timeoutMs` with `what` in the message. For conditions nothing announces (a REST read, a file);
 * where an event announces the change, wait on the event instead.
 */
export async function waitUntil(
  check: () => boolean | Promise<boolean>,
  timeoutMs = 5_000,
  what = "condition",
  intervalMs = 20,
): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await check())) {
    if (performance.now() > deadline) throw new Error(`${what} not met within ${timeoutMs}ms`);
    await sleep(intervalMs);
  }
}

/** Resolves with `promise`, or rejects after `ms` with `what` in the message. */
export async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  const abort = new AbortController();
  try {
    return await Promise.race([
      promise,
      sleep(ms, undefined, { signal: abort.signal }).then(() => {
        throw new Error(`${what}: not done within ${ms}ms`);
      }),
    ]);
  } finally {
    abort.abort();
  }
}
