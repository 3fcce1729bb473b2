/**
 * Runs `task` for every item, at most `concurrency` at once, within an overall `timeoutMs`. Resolves
 * with one outcome per item (in order) once all have settled or the time is up: an item still running
 * then, or not started, gets `onTimeout(item, started)`. Tasks are not cancelled; late answers are ignored.
 */
export function boundedAll<T, R>(
  items: readonly T[],
  options: {
    concurrency: number;
    timeoutMs: number;
    task: (item: T) => Promise<R>;
    onError: (item: T, error: unknown) => R;
    onTimeout: (item: T, started: boolean) => R;
  },
): Promise<R[]> {
  const results = new Array<R | undefined>(items.length);
  const done = new Array<boolean>(items.length).fill(false);
  let next = 0;
  let settled = 0;
  let finished = false;
  return new Promise((resolve) => {
    const finish = () => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      resolve(items.map((item, i) => (done[i] ? (results[i] as R) : options.onTimeout(item, i < next))));
    };
    const timer = setTimeout(finish, options.timeoutMs);
    const startNext = (): void => {
      if (finished || next >= items.length) return;
      const i = next++;
      const item = items[i] as T;
      let running: Promise<R>;
      try {
        running = options.task(item);
      } catch (error) {
        running = Promise.reject(error);
      }
      void running
        .then(
          (value) => value,
          (error: unknown) => options.onError(item, error),
        )
        .then((value) => {
          if (finished) return;
          results[i] = value;
          done[i] = true;
          settled++;
          if (settled === items.length) finish();
          else startNext();
        });
    };
    if (items.length === 0) {
      finish();
      return;
    }
    for (let k = 0; k < Math.min(options.concurrency, items.length); k++) startNext();
  });
}
