import { type Compilable, type CompiledQuery, isCompilable, type Kysely, type QueryResult } from "kysely";
import type { DB } from "./schema.ts";

/** What a lane writes for the rows of one commit. */
interface LanePlan {
  /** Run in order inside the commit's transaction. */
  statements: CompiledQuery[];
  /** Once the transaction has committed: each statement's result, in order (rows in camelCase). */
  committed?(results: QueryResult<unknown>[]): void;
}

/**
 * Rows of one kind (a device's state, its log lines) that a batch writes together: `plan` gets
 * every row of its lane queued in the batch, in the order queued, so it can coalesce them and write
 * them with a few multi-row statements. The statements are plain SQL with their parameters, so the
 * commit can run where the main thread does not wait for it (SQLite: sqlite-writer.ts).
 */
export interface Lane<Row> {
  plan(rows: Row[]): LanePlan;
  /**
   * How long (ms) a row may wait for others to share its commit. Without it a row is committed in
   * the next turn of the event loop. A reconnect storm's hellos arrive about one per turn, so their
   * presence and log rows would cost a transaction each; waiting a few ms lets hundreds share one.
   */
  readonly patienceMs?: number;
}

/** One transaction's statements' results, or the error that rolled it back. */
export type CommitResult = { ok: true; results: QueryResult<unknown>[] } | { ok: false; error: unknown };

/** Runs transactions of compiled statements: on the database's own connection, or in a writer thread. */
export interface Committer {
  /** Runs each list of statements in a transaction of its own, one after another. */
  commit(txs: CompiledQuery[][]): Promise<CommitResult[]>;
  /**
   * True while its commits wait for the disk off the event loop (SQLite's writer thread): a slow
   * commit then costs the loop nothing, and the next one is not spaced.
   */
  readonly offLoop?: boolean;
}

/** The committer on a Kysely connection: PostgreSQL, and SQLite without its writer thread (SQLITE_COMMIT_THREAD). */
export function kyselyCommitter(db: Kysely<DB>): Committer {
  return {
    async commit(txs) {
      const outcomes: CommitResult[] = [];
      for (const statements of txs) {
        try {
          const results = await db.transaction().execute(async (tx) => {
            const out: QueryResult<unknown>[] = [];
            for (const statement of statements) out.push(await tx.executeQuery(statement));
            return out;
          });
          outcomes.push({ ok: true, results });
        } catch (error) {
          outcomes.push({ ok: false, error });
        }
      }
      return outcomes;
    },
  };
}

/**
 * The patience of the rows a device's connection writes (presence, its log lines, a cluster's
 * connection generation): a board waits 10 ms more for its welcome, and a reconnect storm of
 * thousands commits in a few hundred transactions, not in one per board.
 */
export const connectionRowsPatienceMs = 10;

interface Queued {
  statements: CompiledQuery[] | null;
  lane: Lane<unknown> | null;
  row: unknown;
  /** When (performance.now()) this write wants its commit to start at the latest. */
  due: number;
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
 * When commits keep taking long (a slow disk) on the event loop's thread, the next one is spaced by
 * as long as the quickest of the last three took, so batches grow instead of the event loop spending
 * its time in fsync (a committer whose commits wait off the loop is not spaced: the writes queued
 * meanwhile wait for the commit under way, and go together in the next). One
 * slow commit alone (SQLite copying the WAL back into the database) spaces nothing: the writes
 * queued behind it have already waited for it. Rows of a patient lane wait up to its `patienceMs`
 * for company; any other write queued meanwhile takes them along in its commit.
 */
export class WriteBatcher {
  readonly #committer: Committer;
  readonly #maxBatch: number;
  readonly #maxQueued: number;
  #queue: Queued[] = [];
  /** The next flush, while one is scheduled: when it starts, and how to call it off. */
  #next: { at: number; cancel(): void } | null = null;
  #running: Promise<void> | null = null;
  /** The last few commits' durations (ms), the newest at `#flushIndex - 1`. */
  readonly #recentFlushMs = [0, 0, 0];
  #flushIndex = 0;
  #room: { promise: Promise<void>; open(): void } | null = null;

  constructor(committer: Committer, options: number | WriteBatcherOptions = {}) {
    const o = typeof options === "number" ? { maxBatch: options } : options;
    this.#committer = committer;
    this.#maxQueued = o.maxQueued ?? 20_000;
    this.#maxBatch = Math.min(o.maxBatch ?? 2000, this.#maxQueued);
  }

  /** Queues statements to run in order in the next commit; settles when committed. */
  run(...statements: (Compilable | CompiledQuery)[]): Promise<void> {
    const compiled = statements.map((s) => (isCompilable(s) ? s.compile() : s));
    return this.#enqueue(compiled, null, undefined);
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
    while (this.#queue.length > 0 || this.#running || this.#next) {
      if (!this.#running) this.#schedule(0); // patient rows wait no longer
      await (this.#running ?? new Promise((r) => setImmediate(r)));
    }
  }

  #enqueue(statements: CompiledQuery[] | null, lane: Lane<unknown> | null, row: unknown): Promise<void> {
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
    const due = performance.now() + (lane?.patienceMs ?? 0);
    this.#queue.push({ statements, lane, row, due, resolve, reject, settled });
    this.#schedule(due);
    return done;
  }

  /** Makes sure a flush starts by `due` (or as soon as the running one ends). */
  #schedule(due: number): void {
    if (this.#running) return; // it schedules what is left when it ends
    const now = performance.now();
    const spacing = this.#committer.offLoop ? 0 : Math.min(Math.min(...this.#recentFlushMs), 10);
    const full = this.#queue.length >= this.#maxBatch;
    const at = full ? now : Math.max(due, spacing >= 1 ? now + spacing : now);
    if (this.#next && this.#next.at <= at) return;
    this.#next?.cancel();
    const start = () => {
      this.#next = null;
      this.#running = this.#flush().finally(() => {
        this.#running = null;
        this.#openRoom();
        if (this.#queue.length > 0) this.#schedule(earliestDue(this.#queue));
      });
    };
    if (at <= now) {
      const immediate = setImmediate(start);
      this.#next = { at, cancel: () => clearImmediate(immediate) };
    } else {
      const timer = setTimeout(start, at - now);
      this.#next = { at, cancel: () => clearTimeout(timer) };
    }
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
    let together: PlannedCommit | null = null;
    let outcome: CommitResult | undefined;
    try {
      together = plan(batch);
      [outcome] = await this.#committer.commit([together.statements]);
    } catch {
      // planned or committed alone below, so that one bad write fails alone
    } finally {
      this.#recentFlushMs[this.#flushIndex++ % this.#recentFlushMs.length] = performance.now() - started;
    }
    if (together && outcome?.ok) {
      try {
        together.committed(outcome.results);
        for (const item of batch) item.resolve();
      } catch (error) {
        for (const item of batch) item.reject(error); // committed, but a lane could not read its results
      }
      return;
    }
    const alone: (PlannedCommit | null)[] = batch.map((item) => {
      try {
        return plan([item]);
      } catch (error) {
        item.reject(error);
        return null;
      }
    });
    const planned = alone.flatMap((p, i) => (p ? [{ p, item: batch[i]! }] : []));
    let outcomes: CommitResult[];
    try {
      outcomes = await this.#committer.commit(planned.map(({ p }) => p.statements));
    } catch (error) {
      for (const { item } of planned) item.reject(error);
      return;
    }
    for (const [i, { p, item }] of planned.entries()) {
      const outcome = outcomes[i];
      if (!outcome) item.reject(new Error("the commit gave no outcome for this write"));
      else if (!outcome.ok) item.reject(outcome.error);
      else {
        try {
          p.committed(outcome.results);
          item.resolve();
        } catch (error) {
          item.reject(error);
        }
      }
    }
  }
}

function earliestDue(queue: readonly Queued[]): number {
  let due = Number.POSITIVE_INFINITY;
  for (const item of queue) if (item.due < due) due = item.due;
  return due;
}

/** The batch's transaction: its lanes' plans in one, each lane handed its own results. */
type PlannedCommit = Required<LanePlan>;

/**
 * One transaction for the batch: the statements queued with `run` in order, then each lane's rows
 * (in the order its first row was queued); `committed` hands each lane its statements' results.
 */
function plan(batch: readonly Queued[]): PlannedCommit {
  const statements: CompiledQuery[] = [];
  const lanes = new Map<Lane<unknown>, unknown[]>();
  for (const item of batch) {
    if (item.statements) statements.push(...item.statements);
    else if (item.lane) {
      const rows = lanes.get(item.lane);
      if (rows) rows.push(item.row);
      else lanes.set(item.lane, [item.row]);
    }
  }
  const after: { from: number; to: number; committed: (results: QueryResult<unknown>[]) => void }[] = [];
  for (const [lane, rows] of lanes) {
    const p = lane.plan(rows);
    const from = statements.length;
    statements.push(...p.statements);
    if (p.committed) after.push({ from, to: statements.length, committed: p.committed });
  }
  return {
    statements,
    committed: (results) => {
      for (const { from, to, committed } of after) committed(results.slice(from, to));
    },
  };
}
