import {
  type DependencyList,
  type Dispatch,
  type SetStateAction,
  useCallback,
  useEffect,
  useRef,
  useState,
} from "react";

type Loaded<T> =
  | { status: "loading"; data?: undefined; error?: undefined }
  | { status: "error"; data?: undefined; error: unknown }
  | { status: "ready"; data: T; error?: undefined };

export type LoadResult<T> = Loaded<T> & {
  /** Loads again, keeping what is shown until the answer arrives. */
  reload: () => Promise<void>;
  /**
   * Edits what was loaded (after a change the server confirmed, or a live event). While loading,
   * the edit waits for the answer and is applied to it.
   */
  setData: Dispatch<SetStateAction<T>>;
};

/** Loads data when `deps` change (showing "loading" again), with reload and local edits. */
export function useLoad<T>(load: () => Promise<T>, deps: DependencyList): LoadResult<T> {
  const [state, setState] = useState<Loaded<T>>({ status: "loading" });
  const run = useCallback(load, deps);
  const latest = useRef(run);
  latest.current = run;

  // Edits made while the first answer is on its way (a device added before the list arrived)
  // are applied to that answer, so they are not lost; each edit must hold whether or not the
  // answer already has the change (filter by id before adding, for instance).
  const loading = useRef(true);
  const pending = useRef<((data: T) => T)[]>([]);

  useEffect(() => {
    let current = true;
    loading.current = true;
    pending.current = [];
    setState({ status: "loading" });
    run().then(
      (loaded) => {
        if (!current) return;
        const data = pending.current.reduce((value, edit) => edit(value), loaded);
        loading.current = false;
        pending.current = [];
        setState({ status: "ready", data });
      },
      (error: unknown) => {
        if (!current) return;
        loading.current = false;
        pending.current = [];
        setState({ status: "error", error });
      },
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
    const edit = typeof update === "function" ? (update as (previous: T) => T) : () => update;
    if (loading.current) {
      pending.current.push(edit);
      return;
    }
    setState((previous) =>
      previous.status === "ready" ? { status: "ready", data: edit(previous.data) } : previous,
    );
  }, []);

  return { ...state, reload, setData };
}
