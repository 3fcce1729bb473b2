import { Worker } from "node:worker_threads";
import { CamelCasePlugin, type CompiledQuery, type QueryResult } from "kysely";
import type { FromWriter, ToWriter, WriterError, WriterOptions } from "./sqlite-writer-messages.ts";
import type { CommitResult, Committer } from "./write-batcher.ts";

/** The thread's entry beside this file: `.ts` from the sources, `.js` in the npm packages. */
const threadSource = new URL("./sqlite-writer-thread.ts", import.meta.url);
const threadUrl = import.meta.url.endsWith(".ts")
  ? threadSource
  : new URL(threadSource.href.replace(/\.ts$/, ".js"));

/** Kysely's CamelCasePlugin turns result columns into camelCase; the thread's results get the same. */
const camelCase = new CamelCasePlugin();

/**
 * The group commit on SQLite, in a thread of its own with its own connection to the file. A commit
 * is mostly waiting for the disk (`synchronous = FULL` syncs the WAL at each one): on the main
 * thread that wait held up every device socket, HTTP request and watcher. Each `commit()` is one
 * message each way; the thread runs its transactions (`BEGIN IMMEDIATE`) one after another. The
 * main thread's own connection keeps the reads and the rarer writes; WAL lets it read while the
 * thread writes, and SQLite's busy timeout makes either side's write wait for the other's.
 *
 * Should the thread stop (it never does on its own), the writes go on through `fallback`.
 */
export class SqliteWriter implements Committer {
  readonly #worker: Worker;
  readonly #fallback: Committer;
  readonly #pending = new Map<number, { resolve(r: CommitResult[]): void; reject(e: Error): void }>();
  #nextId = 1;
  #gone: Error | null = null;
  #closed: Promise<void> | null = null;

  private constructor(worker: Worker, fallback: Committer) {
    this.#worker = worker;
    this.#fallback = fallback;
  }

  /** Starts the thread and resolves once its connection is open. */
  static start(options: WriterOptions, fallback: Committer): Promise<SqliteWriter> {
    const worker = new Worker(threadUrl, { name: "sqlite writer", workerData: options });
    const writer = new SqliteWriter(worker, fallback);
    return new Promise((resolve, reject) => {
      const failed = (error: Error) =>
        reject(new Error(`the database writer thread did not start: ${error.message}`));
      worker.once("error", failed);
      worker.once("message", (m: FromWriter) => {
        worker.off("error", failed);
        if (m.id !== 0) return reject(new Error("the database writer thread answered before it was ready"));
        writer.#listen();
        worker.unref();
        resolve(writer);
      });
    });
  }

  #listen(): void {
    this.#worker.on("message", (m: FromWriter) => {
      const pending = this.#pending.get(m.id);
      if (!pending) return;
      this.#pending.delete(m.id);
      if (this.#pending.size === 0) this.#worker.unref();
      void Promise.all(
        m.outcomes.map(async (o): Promise<CommitResult> => {
          if (!o.ok) return { ok: false, error: toError(o.error) };
          const results = await Promise.all(
            o.results.map(
              (result) =>
                camelCase.transformResult({
                  result: result as QueryResult<Record<string, unknown>>,
                  queryId: { queryId: "" },
                }) as Promise<QueryResult<unknown>>,
            ),
          );
          return { ok: true, results };
        }),
      ).then(pending.resolve, pending.reject);
    });
    this.#worker.on("error", (error) => {
      this.#gone = new Error(`the database writer thread failed: ${error.message}`, { cause: error });
    });
    this.#worker.on("exit", () => {
      this.#gone ??= new Error("the database writer thread stopped");
      for (const { reject } of this.#pending.values()) reject(this.#gone);
      this.#pending.clear();
    });
  }

  /** Commits run in the thread (not through the fallback, once it stopped or is closing). */
  get offLoop(): boolean {
    return !this.#gone && !this.#closed;
  }

  commit(txs: CompiledQuery[][]): Promise<CommitResult[]> {
    if (!this.offLoop) return this.#fallback.commit(txs);
    const id = this.#nextId++;
    const message: ToWriter = {
      t: "commit",
      id,
      txs: txs.map((queries) => queries.map(({ sql, parameters }) => ({ sql, parameters }))),
    };
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      // A commit under way keeps the process alive, as a write on the main thread would.
      if (this.#pending.size === 1) this.#worker.ref();
      this.#worker.postMessage(message);
    });
  }

  /** Closes the thread's connection and ends the thread; commits still under way finish first. */
  close(): Promise<void> {
    this.#closed ??= new Promise<void>((resolve) => {
      if (this.#gone) return resolve();
      this.#worker.once("exit", () => resolve());
      this.#worker.ref();
      this.#worker.postMessage({ t: "close" } satisfies ToWriter);
    });
    return this.#closed;
  }
}

function toError(e: WriterError): Error {
  return Object.assign(new Error(e.message), {
    ...(e.code === undefined ? {} : { code: e.code }),
    ...(e.errcode === undefined ? {} : { errcode: e.errcode }),
  });
}
