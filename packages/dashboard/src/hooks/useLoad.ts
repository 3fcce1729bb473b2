import {
  type DependencyList,
  type Dispatch,
  type SetStateAction,
  useCallback,
  useEffect,
  useRef,
  useState,
} from "react";

export type Loaded<T> =
  | { status: "loading"; data?: undefined; error?: undefined }
  | { status: "error"; data?: undefined; error: unknown }
  | { status: "ready"; data: T; error?: undefined };

export type LoadResult<T> = Loaded<T> & {
  /** Loads again, keeping what is shown until the answer arrives. */
  reload: () => Promise<void>;
  /** Edits what was loaded (after a change the server confirmed, or a live event). */
  setData: Dispatch<SetStateAction<T>>;
};

/** Loads data when `deps` change (showing "loading" again), with reload and local edits. */
export function useLoad<T>(load: () => Promise<T>, deps: DependencyList): LoadResult<T> {
  const [state, setState] = useState<Loaded<T>>({ status: "loading" });
  const run = useCallback(load, deps);
  const latest = useRef(run);
  latest.current = run;

  useEffect(() => {
    let current = true;
    setState({ status: "loading" });
    run().then(
      (data) => current && setState({ status: "ready", data }),
      (error: unknown) => current && setState({ status: "error", error }),
    );
    return () => {
      current = false;
    };
  }, [run]);

  const reload = useCallback(async () => {
    const started = latest.current;
    try {
      const data = await started();
      if (latest.current === started) setState({ status: "ready", data });
    } catch (error) {
      if (latest.current === started) setState({ status: "error", error });
    }
  }, []);

  const setData: Dispatch<SetStateAction<T>> = useCallback((update) => {
    setState((previous) =>
      previous.status === "ready"
        ? {
            status: "ready",
            data: typeof update === "function" ? (update as (p: T) => T)(previous.data) : update,
          }
        : previous,
    );
  }, []);

  return { ...state, reload, setData };
}
