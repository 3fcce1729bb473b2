import { type ErrorCode, errorCatalog } from "@sdk/protocol";

/** An error with a stable code from the catalog in @sdk/protocol; the global handler shapes the reply. */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly fields?: { path: string; message: string }[];
  readonly headers?: Record<string, string>;
  readonly details?: Record<string, unknown>;

  constructor(
    code: ErrorCode,
    message: string = errorCatalog[code].message,
    extra: {
      fields?: { path: string; message: string }[];
      headers?: Record<string, string>;
      details?: Record<string, unknown>;
    } = {},
  ) {
    super(message);
    this.name = "AppError";
    this.code = code;
    this.status = errorCatalog[code].status;
    this.fields = extra.fields;
    this.headers = extra.headers;
    this.details = extra.details;
  }
}

/** SQLite busy/locked/read-only/full/I-O errors and PostgreSQL connection failures. */
export function isDatabaseUnavailable(error: unknown): boolean {
  const e = error as { code?: string; errcode?: number; message?: string };
  if (e?.code === "ERR_SQLITE_ERROR" && typeof e.errcode === "number") {
    // SQLITE_BUSY 5, LOCKED 6, READONLY 8, IOERR 10, FULL 13, CANTOPEN 14 (low byte of extended codes)
    return [5, 6, 8, 10, 13, 14].includes(e.errcode & 0xff);
  }
  if (typeof e?.code === "string") {
    if (["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "ENOTFOUND", "57P01", "57P03", "25006"].includes(e.code))
      return true;
    if (e.code.startsWith("08")) return true; // PostgreSQL connection exceptions
  }
  return /Connection terminated|timeout exceeded when trying to connect/i.test(e?.message ?? "");
}
