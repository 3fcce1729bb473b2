import { useCallback, useRef, useState } from "react";

/**
 * Runs a user action (a form submit, a button): `busy` while it runs, `error` when it failed.
 * The promise resolves to the action's result, or undefined after an error (shown by the caller).
 */
export function useAction<A extends unknown[], R>(action: (...args: A) => Promise<R>) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const latest = useRef(action);
  latest.current = action;

  const run = useCallback(async (...args: A): Promise<R | undefined> => {
    setBusy(true);
    setError(null);
    try {
      return await latest.current(...args);
    } catch (caught) {
      setError(caught);
      return undefined;
    } finally {
      setBusy(false);
    }
  }, []);

  const clear = useCallback(() => setError(null), []);
  return { run, busy, error, clear };
}
