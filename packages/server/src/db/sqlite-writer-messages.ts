// What the main thread and the SQLite writer thread (sqlite-writer.ts) say to each other.

export interface WriterOptions {
  file: string;
  busyTimeoutMs: number;
  journalSizeLimitBytes: number;
}

/** A compiled statement: Kysely's SQL and its parameters. */
export interface Statement {
  sql: string;
  parameters: readonly unknown[];
}

/** A statement's result, as Kysely's SQLite driver gives it. */
interface StatementResult {
  rows: unknown[];
  numAffectedRows?: bigint;
}

export interface WriterError {
  message: string;
  code?: string;
  errcode?: number;
}

/** One transaction's results, or the error that rolled it back. */
export type CommitOutcome = { ok: true; results: StatementResult[] } | { ok: false; error: WriterError };

export type ToWriter = { t: "commit"; id: number; txs: Statement[][] } | { t: "close" };

/** The outcomes of a `commit` in the order of its transactions; id 0 (no outcomes): the thread is ready. */
export interface FromWriter {
  id: number;
  outcomes: CommitOutcome[];
}
