import type { ReactNode } from "react";

/**
 * A table that turns into stacked cards on a phone (`responsive`), with a caption for screen
 * readers and, when `actions` is set, a last column of row buttons.
 */
export function DataTable({
  caption,
  columns,
  actions = false,
  children,
}: {
  caption: string;
  columns: string[];
  actions?: boolean;
  children: ReactNode;
}) {
  return (
    <div className="table-wrap">
      <table className="table responsive">
        <caption className="sr-only">{caption}</caption>
        <thead>
          <tr>
            {columns.map((column) => (
              <th scope="col" key={column}>
                {column}
              </th>
            ))}
            {actions && (
              <th scope="col">
                <span className="sr-only">Actions</span>
              </th>
            )}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}
