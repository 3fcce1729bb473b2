import type { Kysely, Transaction } from "kysely";
import type { DB } from "./schema.ts";

type Work = (tx: Transaction<DB>) => Promise<void>;

/**
 * Rows of one kind (a device's state, its log lines) that a batch writes together: `write` gets
 * every row of its lane queued in the batch, in the order queued, inside the batch's transaction,
 * so it can coalesce them and insert them with a few multi-row statements.
 */
export interface Lane<Row> {
  write(tx: Transaction<DB>, rows: Row[]): Promise<void>;
}

interface Queued {
  work: Work | null;
  lane: Lane<unknown> | null;
  row: unknown;
  resolve(): void;
  reject(error: unknown): void;
  /** Settles (never rejects) once this write is committed or has failed. */
  settled: Promise<void>;
}

export interface WriteBatcherOptions {
  /** Writes committed in one transaction at most. */
  maxBatch?: number;
  /** Writes queued at most before `room()` asks callers to wait (it lets them go again at half). */
  maxQueued?: number;
}

/**
 * Group commit for frequent small writes (device presence, logs, state): writes queued in the same
 * turn of the event loop share one transaction, so a burst of 1,000 device messages costs one
 * commit (one fsync on SQLite) instead of 1,000. Each caller's promise settles when its write is
 * committed. If a batch fails, its writes are retried one by one so one bad write fails alone.
 *
 * A commit that took long (a slow disk) spaces the next one by as long, so batches grow instead of
 * the event loop spending its time in fsync.
 */
export class WriteBatcher {
  readonly #db: Kysely<DB>;
  readonly #maxBatch: number;
  readonly #maxQueued: number;
  #queue: Queued[] = [];
  #scheduled = false;
  #running: Promise<void> | null = null;
  #lastFlushMs = 0;
  #room: { promise: Promise<void>; open(): void } | null = null;

  constructor(db: Kysely<DB>, options: number | WriteBatcherOptions = {}) {
    const o = typeof options === "number" ? { maxBatch: options } : options;
    this.#db = db;
    this.#maxQueued = o.maxQueued ?? 20_000;
    this.#maxBatch = Math.min(o.maxBatch ?? 2000, this.#maxQueued);
  }

  run(work: Work): Promise<void> {
    return this.#enqueue(work, null, undefined);
  }

  /** Queues one row of a lane; settles when committed. */
  add<Row>(lane: Lane<Row>, row: Row): Promise<void> {
    return this.#enqueue(null, lane as Lane<unknown>, row);
  }

  /** Writes queued and not yet committed. */
  get queued(): number {
    return this.#queue.length;
  }

  /**
   * `null` while the queue has room; otherwise a promise that resolves once it has drained to half
   * its bound. Hot writers await it before queueing, so an overloaded disk pushes back on them
   * instead of the queue growing without limit.
   */
  room(): Promise<void> | null {
    if (this.#queue.length < this.#maxQueued && !this.#room) return null;
    if (!this.#room) {
      let open!: () => void;
      const promise = new Promise<void>((resolve) => {
        open = resolve;
      });
      this.#room = { promise, open };
    }
    return this.#room.promise;
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

  #enqueue(work: Work | null, lane: Lane<unknown> | null, row: unknown): Promise<void> {
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
    this.#queue.push({ work, lane, row, resolve, reject, settled });
    this.#schedule();
    return done;
  }

  #schedule(): void {
    if (this.#scheduled || this.#running) return;
    this.#scheduled = true;
    const start = () => {
      this.#scheduled = false;
      this.#running = this.#flush().finally(() => {
        this.#running = null;
        this.#openRoom();
        if (this.#queue.length > 0) this.#schedule();
      });
    };
    const spacing = Math.min(this.#lastFlushMs, 10);
    if (spacing >= 1 && this.#queue.length < this.#maxBatch) setTimeout(start, spacing);
    else setImmediate(start);
  }

  #openRoom(): void {
    if (this.#room && this.#queue.length <= this.#maxQueued / 2) {
      this.#room.open();
      this.#room = null;
    }
  }

  async #flush(): Promise<void> {
    const batch = this.#queue.splice(0, this.#maxBatch);
    if (batch.length === 0) return;
    const started = performance.now();
    try {
      await this.#db.transaction().execute((tx) => write(tx, batch));
      for (const item of batch) item.resolve();
    } catch {
      for (const item of batch) {
        try {
          await this.#db.transaction().execute((tx) => write(tx, [item]));
          item.resolve();
        } catch (error) {
          item.reject(error);
        }
      }
    }
    this.#lastFlushMs = performance.now() - started;
  }
}

/** Runs the batch's work in order, then each lane's rows (in the order its first row was queued). */
async function write(tx: Transaction<DB>, batch: readonly Queued[]): Promise<void> {
  const lanes = new Map<Lane<unknown>, unknown[]>();
  for (const item of batch) {
    if (item.work) await item.work(tx);
    else if (item.lane) {
      const rows = lanes.get(item.lane);
      if (rows) rows.push(item.row);
      else lanes.set(item.lane, [item.row]);
    }
  }
  for (const [lane, rows] of lanes) await lane.write(tx, rows);
}
