import type { Kysely, Transaction } from "kysely";
import type { DB } from "./schema.ts";

type Work = (tx: Transaction<DB>) => Promise<void>;

interface Queued {
  work: Work;
  resolve(): void;
  reject(error: unknown): void;
  /** Settles (never rejects) once this write is committed or has failed. */
  settled: Promise<void>;
}

/**
 * Group commit for frequent small writes (device presence, logs, state): writes queued in the same
 * turn of the event loop share one transaction, so a burst of 1,000 device messages costs one
 * commit (one fsync on SQLite) instead of 1,000. Each caller's promise settles when its write is
 * committed. If a batch fails, its writes are retried one by one so one bad write fails alone.
 */
export class WriteBatcher {
  readonly #db: Kysely<DB>;
  readonly #maxBatch: number;
  #queue: Queued[] = [];
  #scheduled = false;
  #running: Promise<void> | null = null;

  constructor(db: Kysely<DB>, maxBatch = 2000) {
    this.#db = db;
    this.#maxBatch = maxBatch;
  }

  run(work: Work): Promise<void> {
    let resolve!: () => void;
    let reject!: (error: unknown) => void;
    const done = new Promise<void>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    const settled = done.then(
      () => {},
      () => {},
    );
    this.#queue.push({ work, resolve, reject, settled });
    this.#schedule();
    return done;
  }

  /**
   * Resolves once every write queued before this call is committed, without waiting for writes
   * queued later (reads use it: they see what watchers were already told, even under load).
   */
  barrier(): Promise<void> {
    return this.#queue.at(-1)?.settled ?? this.#running ?? Promise.resolve();
  }

  /** Resolves once everything queued so far is committed (or failed). */
  async drain(): Promise<void> {
    while (this.#queue.length > 0 || this.#running || this.#scheduled) {
      await (this.#running ?? new Promise((r) => setImmediate(r)));
    }
  }

  #schedule(): void {
    if (this.#scheduled || this.#running) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      this.#running = this.#flush().finally(() => {
        this.#running = null;
        if (this.#queue.length > 0) this.#schedule();
      });
    });
  }

  async #flush(): Promise<void> {
    const batch = this.#queue.splice(0, this.#maxBatch);
    if (batch.length === 0) return;
    try {
      await this.#db.transaction().execute(async (tx) => {
        for (const item of batch) await item.work(tx);
      });
      for (const item of batch) item.resolve();
    } catch {
      for (const item of batch) {
        try {
          await this.#db.transaction().execute((tx) => item.work(tx));
          item.resolve();
        } catch (error) {
          item.reject(error);
        }
      }
    }
  }
}
