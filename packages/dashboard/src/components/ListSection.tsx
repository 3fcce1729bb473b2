import type { ReactNode } from "react";
import type { LoadResult } from "../hooks/useLoad.ts";
import { ErrorMessage } from "./ErrorMessage.tsx";
import { Empty, Loading } from "./Feedback.tsx";

/**
 * A card section around a loaded list: its heading (which names the region), the loading line,
 * the error with a retry, what an empty list means, and the list itself once it is there.
 */
export function ListSection<T>({
  id,
  title,
  list,
  what,
  empty,
  before,
  after,
  children,
}: {
  /** Prefix of the heading's id. */
  id: string;
  title: string;
  list: LoadResult<T[]>;
  /** Said while loading: "Loading {what}…". */
  what: string;
  /** Shown instead of the list when it is empty (omit to render an empty list as it is). */
  empty?: { title: string; body?: ReactNode };
  /** Above the list (an explanation, a secret shown once). */
  before?: ReactNode;
  /** Below the list (the form that adds to it). */
  after?: ReactNode;
  children: (items: T[]) => ReactNode;
}) {
  return (
    <section className="card section" aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>{title}</h2>
      {before}
      {list.status === "loading" && <Loading what={what} />}
      {list.status === "error" && <ErrorMessage error={list.error} onRetry={list.reload} />}
      {list.status === "ready" &&
        (list.data.length === 0 && empty ? (
          <Empty title={empty.title}>{empty.body}</Empty>
        ) : (
          children(list.data)
        ))}
      {after}
    </section>
  );
}
