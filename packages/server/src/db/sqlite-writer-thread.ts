// The SQLite writer thread's entry (see sqlite-writer.ts): its own connection to the database file,
// on which it runs the group commit's transactions.
import { parentPort, workerData } from "node:worker_threads";
import { openSqlite } from "./sqlite-adapter.ts";
import type {
  CommitOutcome,
  FromWriter,
  Statement,
  ToWriter,
  WriterError,
  WriterOptions,
} from "./sqlite-writer-messages.ts";

const options = workerData as WriterOptions;
const port = parentPort!;

const sqlite = openSqlite(options.file, options.busyTimeoutMs);
sqlite.raw.exec(`PRAGMA journal_size_limit = ${options.journalSizeLimitBytes}`);
sqlite.raw.exec("PRAGMA temp_store = MEMORY");

/** Runs one transaction's statements in order; its results, or the error that rolled it back. */
function runTransaction(statements: Statement[]): CommitOutcome {
  try {
    sqlite.prepare("begin immediate").run([]);
  } catch (error) {
    return { ok: false, error: describe(error) };
  }
  try {
    const results = statements.map(({ sql, parameters }) => {
      const stmt = sqlite.prepare(sql);
      if (stmt.reader) return { rows: stmt.all(parameters) as unknown[] };
      const { changes } = stmt.run(parameters) as { changes: number | bigint };
      return { rows: [], numAffectedRows: BigInt(changes) };
    });
    sqlite.prepare("commit").run([]);
    return { ok: true, results };
  } catch (error) {
    try {
      sqlite.prepare("rollback").run([]);
    } catch {
      // SQLite rolled back by itself (a full disk, an I/O error)
    }
    return { ok: false, error: describe(error) };
  }
}

function describe(error: unknown): WriterError {
  const e = error as { message?: string; code?: string; errcode?: number };
  return {
    message: e?.message ?? String(error),
    ...(typeof e?.code === "string" ? { code: e.code } : {}),
    ...(typeof e?.errcode === "number" ? { errcode: e.errcode } : {}),
  };
}

port.on("message", (m: ToWriter) => {
  if (m.t === "close") {
    sqlite.close();
    port.close();
    return;
  }
  const reply: FromWriter = { id: m.id, outcomes: m.txs.map(runTransaction) };
  port.postMessage(reply);
});
port.postMessage({ id: 0, outcomes: [] } satisfies FromWriter);
