import { AppError } from "../errors.ts";

/**
 * A page of a list read with `before`: the repository answers `null` when `before` is not an entry
 * of this list, and that is a mistake to report, never an empty or newest page. The answer is the
 * same whether the id is unknown, pruned, or an entry of a list the caller cannot see.
 */
export function pageAfterCursor<T>(rows: T[] | null, list: string): T[] {
  if (rows) return rows;
  const message = `is not the id of an entry in ${list}`;
  throw new AppError(
    "invalid_request",
    `Invalid request: before ${message}; it may have been pruned, so ask again without before to start from the newest entry`,
    { fields: [{ path: "before", message }] },
  );
}
