import type { ReactNode } from "react";
import { useTitle } from "../hooks/useTitle.ts";

/**
 * The page's h1 (focused after navigation, so screen readers start at the new page) with an
 * optional trail of links above it and actions beside it.
 */
export function PageHeader({
  title,
  trail,
  actions,
  children,
}: {
  title: string;
  trail?: ReactNode;
  actions?: ReactNode;
  children?: ReactNode;
}) {
  useTitle(title);
  return (
    <header className="page-header">
      {trail && (
        <nav aria-label="Breadcrumb" className="breadcrumb">
          {trail}
        </nav>
      )}
      <div className="page-header-row">
        <h1 tabIndex={-1} id="page-title">
          {title}
        </h1>
        {actions && <div className="page-actions">{actions}</div>}
      </div>
      {children}
    </header>
  );
}
