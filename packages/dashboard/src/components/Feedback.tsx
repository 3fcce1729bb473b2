import type { ReactNode } from "react";

/** A loading line that screen readers announce. */
export function Loading({ what }: { what: string }) {
  return (
    <p className="loading" role="status">
      <span className="spinner" aria-hidden="true" /> Loading {what}…
    </p>
  );
}

/** What an empty list means and what to do about it. */
export function Empty({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <div className="empty">
      <p className="empty-title">{title}</p>
      {children && <div className="empty-body">{children}</div>}
    </div>
  );
}

/** A short confirmation ("Saved") read out by screen readers. */
export function Success({ children }: { children: ReactNode }) {
  return (
    <p className="notice notice-success" role="status">
      {children}
    </p>
  );
}
