import type { Retention } from "@sdk/protocol";
import type { Config } from "../config.ts";
import type { Database } from "../db/database.ts";
import { AppError } from "../errors.ts";
import type { Clock } from "../lib/clock.ts";
import { sortableIdBefore } from "../lib/ids.ts";
import type { Repositories } from "../repositories/index.ts";
import type { RetentionRepository, RetentionRules } from "../repositories/retention.ts";
import { freeBytes } from "../storage/disk-space.ts";
import { type Principal, viewerOf } from "./auth.ts";
import { projectNotFound } from "./projects.ts";
import { iso } from "./views.ts";

const dayMs = 86_400_000;
const mb = 1024 * 1024;
/** One run of the cap's enforcement removes at most this many batches; the next run goes on. */
const capBatchesPerRun = 500;
/** Free pages handed back to the filesystem per statement (1 MB at 4 KB pages). */
const reclaimPagesPerStep = 256;

export interface DiskStatus {
  /** SQLite: the database file's size; PostgreSQL: pg_database_size. */
  databaseBytes: number;
  /** SQLite: its write-ahead log's size (on disk besides databaseBytes); PostgreSQL: 0. */
  databaseWalBytes: number;
  /** SQLite: free pages inside the file not yet given back to the filesystem. */
  databaseFreeBytes: number;
  /** Free space of the filesystem holding DATA_DIR; `null` when it cannot be read. */
  dataDirFreeBytes: number | null;
  /**
   * DATA_DIR has less than DISK_LOW_MB free: writes may soon fail. Once true it stays true until
   * more than DISK_LOW_MB plus 10 % is free, so it does not flap around the threshold.
   */
  diskLow: boolean;
  /** DATABASE_MAX_MB, `null` for no cap (and with PostgreSQL, where it does not apply). */
  databaseMaxBytes: number | null;
}

/** The later of an age bound and the oldest id kept by count: everything below it goes. */
const later = (age: string, kept: string | undefined) => (kept !== undefined && kept > age ? kept : age);

/** Lets writes queued behind a batch of deletes go first. */
const yieldTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * How long device logs and state history are kept: per project (defaults from the server's
 * configuration), with a server-wide cap on the database's size, enforced by the sweeper in batches.
 */
export function retentionService(deps: {
  repos: Pick<Repositories, "projects">;
  retention: RetentionRepository;
  database: Pick<Database, "dialect" | "reclaimSpace" | "checkpoint" | "walBytes">;
  config: Pick<Config, "device" | "retention" | "dataDir">;
  clock: Clock;
  /** Free bytes of DATA_DIR's filesystem (tests pass their own). */
  freeBytes?: (dir: string) => Promise<number | null>;
}) {
  const { repos, retention: repo, database, config, clock } = deps;
  const dataDirFree = deps.freeBytes ?? freeBytes;
  const defaults: RetentionRules = {
    logMaxEntries: config.device.logMaxEntries,
    logMaxAgeDays: config.device.logMaxAgeDays,
    stateHistoryMaxEntries: config.device.stateHistoryMaxEntries,
    stateHistoryMaxAgeDays: config.retention.stateHistoryMaxAgeDays,
  };
  const batchRows = config.retention.batchRows;
  const capBytes = config.retention.databaseMaxMb * mb;
  const lowBytes = config.retention.diskLowMb * mb;
  /** Hysteresis: once low, the disk counts as recovered only above DISK_LOW_MB plus 10 %. */
  const recoveredBytes = lowBytes * 1.1;
  let low = false;
  let reportedLow = false;
  let running: Promise<unknown> = Promise.resolve();

  /** One sweep at a time: the hourly rules and the cap never delete side by side. */
  function exclusive<T>(work: () => Promise<T>): Promise<T> {
    const next = running.then(work, work);
    running = next.catch(() => {});
    return next;
  }

  /** Deletes in statements of at most `batchRows` rows, yielding after each; stops when aborted. */
  async function inBatches(step: (limit: number) => Promise<number>, signal?: AbortSignal) {
    let total = 0;
    while (!signal?.aborted) {
      const removed = await step(batchRows);
      total += removed;
      await yieldTurn();
      if (removed < batchRows) break;
    }
    return total;
  }

  function view(row: (RetentionRules & { updatedAt: number }) | undefined): Retention {
    const rules = row ?? defaults;
    return {
      logMaxEntries: rules.logMaxEntries,
      logMaxAgeDays: rules.logMaxAgeDays,
      stateHistoryMaxEntries: rules.stateHistoryMaxEntries,
      stateHistoryMaxAgeDays: rules.stateHistoryMaxAgeDays,
      custom: row !== undefined,
      updatedAt: row ? iso(row.updatedAt) : null,
      serverLimits: {
        logMaxEntries: config.device.logMaxEntries,
        stateHistoryMaxEntries: config.device.stateHistoryMaxEntries,
      },
    };
  }

  async function databaseSize() {
    const size = await repo.size();
    return { ...size, used: size.bytes - size.freeBytes };
  }

  /** Hands free pages back in small steps (writes go between them), then empties the WAL. */
  async function reclaim(): Promise<void> {
    if (database.dialect !== "sqlite") return;
    let given = false;
    for (;;) {
      const { freeBytes: free } = await repo.size();
      if (free === 0) break;
      await database.reclaimSpace(reclaimPagesPerStep);
      await yieldTurn();
      if ((await repo.size()).freeBytes >= free) break; // nothing given back (not incremental)
      given = true;
    }
    if (given) await database.checkpoint();
  }

  /** SQLite only: PostgreSQL's size does not drop when rows are deleted, so it cannot steer this. */
  async function enforceCap(): Promise<{ removed: number; overCap: boolean }> {
    if (capBytes === 0 || database.dialect !== "sqlite") return { removed: 0, overCap: false };
    let removed = 0;
    for (let batch = 0; batch < capBatchesPerRun; batch++) {
      if ((await databaseSize()).used <= capBytes) break;
      const n = await repo.deleteOldestAnywhere(batchRows);
      removed += n;
      await yieldTurn();
      if (n === 0) break;
    }
    if (removed > 0) await reclaim();
    return { removed, overCap: (await databaseSize()).used > capBytes };
  }

  /** Per device and per entity: entries older than the age rule or beyond the count, in batches. */
  async function applyRules(signal?: AbortSignal): Promise<number> {
    const now = clock.now();
    let removed = 0;
    for (const project of await repo.allProjects()) {
      const id = project.projectId;
      const rules: RetentionRules = {
        logMaxEntries: project.logMaxEntries ?? defaults.logMaxEntries,
        logMaxAgeDays: project.logMaxAgeDays ?? defaults.logMaxAgeDays,
        stateHistoryMaxEntries: project.stateHistoryMaxEntries ?? defaults.stateHistoryMaxEntries,
        stateHistoryMaxAgeDays: project.stateHistoryMaxAgeDays ?? defaults.stateHistoryMaxAgeDays,
      };
      const logAge = sortableIdBefore("log", now - rules.logMaxAgeDays * dayMs);
      for (const deviceId of await repo.deviceIds(id)) {
        if (signal?.aborted) return removed;
        const before = later(logAge, await repo.oldestLogKept(deviceId, rules.logMaxEntries));
        removed += await inBatches((limit) => repo.deleteLogsBefore(deviceId, before, limit), signal);
      }
      const historyAge = sortableIdBefore("sth", now - rules.stateHistoryMaxAgeDays * dayMs);
      for (const { deviceId, entityId } of await repo.entities(id)) {
        if (signal?.aborted) return removed;
        const kept = await repo.oldestHistoryKept(deviceId, entityId, rules.stateHistoryMaxEntries);
        const before = later(historyAge, kept);
        removed += await inBatches(
          (limit) => repo.deleteHistoryBefore(deviceId, entityId, before, limit),
          signal,
        );
      }
    }
    return removed;
  }

  async function diskStatus(): Promise<DiskStatus> {
    const [size, free] = await Promise.all([repo.size(), dataDirFree(config.dataDir)]);
    low = free !== null && lowBytes > 0 && free < (low ? recoveredBytes : lowBytes);
    return {
      databaseBytes: size.bytes,
      databaseWalBytes: database.walBytes(),
      databaseFreeBytes: size.freeBytes,
      dataDirFreeBytes: free,
      diskLow: low,
      databaseMaxBytes: capBytes > 0 && database.dialect === "sqlite" ? capBytes : null,
    };
  }

  return {
    async get(principal: Principal, projectId: string): Promise<Retention> {
      if (!(await repos.projects.findVisible(viewerOf(principal), projectId))) throw projectNotFound();
      return view(await repo.find(viewerOf(principal), projectId));
    },

    async set(principal: Principal, projectId: string, changes: Partial<RetentionRules>): Promise<Retention> {
      if (!(await repos.projects.findVisible(viewerOf(principal), projectId))) throw projectNotFound();
      const fields = (["logMaxEntries", "stateHistoryMaxEntries"] as const)
        .filter((name) => (changes[name] ?? 0) > config.device[name])
        .map((name) => ({
          path: name,
          message: `must be at most ${config.device[name]} (this server's limit, ${name === "logMaxEntries" ? "DEVICE_LOG_MAX_ENTRIES" : "STATE_HISTORY_MAX_ENTRIES"})`,
        }));
      if (fields.length > 0)
        throw new AppError("invalid_request", `Invalid request: ${fields[0]!.path} ${fields[0]!.message}`, {
          fields,
        });
      const current = (await repo.find(viewerOf(principal), projectId)) ?? defaults;
      const rules: RetentionRules = {
        logMaxEntries: changes.logMaxEntries ?? current.logMaxEntries,
        logMaxAgeDays: changes.logMaxAgeDays ?? current.logMaxAgeDays,
        stateHistoryMaxEntries: changes.stateHistoryMaxEntries ?? current.stateHistoryMaxEntries,
        stateHistoryMaxAgeDays: changes.stateHistoryMaxAgeDays ?? current.stateHistoryMaxAgeDays,
      };
      const now = clock.now();
      await repo.save(projectId, rules, now);
      return view({ ...rules, updatedAt: now });
    },

    /** The hourly sweep: every project's rules, then the cap, then the space given back. */
    sweep: (signal?: AbortSignal) =>
      exclusive(async () => {
        const removed = await applyRules(signal);
        if (signal?.aborted) return { removed, overCap: false };
        const cap = await enforceCap();
        await reclaim();
        return { removed: removed + cap.removed, overCap: cap.overCap };
      }),

    /** Every minute: cheap when under the cap (one size query). */
    enforceCap: () => exclusive(enforceCap),

    diskStatus,

    /**
     * Whether DATA_DIR just ran low on space or recovered: a message once per episode (the log
     * line), nothing while it stays the same.
     */
    async checkDisk(): Promise<{ level: "warn" | "info"; message: string } | undefined> {
      const status = await diskStatus();
      if (status.diskLow === reportedLow) return undefined;
      reportedLow = status.diskLow;
      const free = `${Math.round((status.dataDirFreeBytes ?? 0) / mb)} MB`;
      return status.diskLow
        ? {
            level: "warn",
            message: `Low disk space: ${free} free in DATA_DIR ${config.dataDir} (warning below DISK_LOW_MB=${config.retention.diskLowMb}); the database is ${Math.round(status.databaseBytes / mb)} MB. Writes fail when the disk is full: free some space or shorten retention`,
          }
        : { level: "info", message: `Disk space recovered: ${free} free in DATA_DIR ${config.dataDir}` };
    },
  };
}
