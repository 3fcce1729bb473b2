import { AppError } from "../errors.ts";
import type { Clock } from "../lib/clock.ts";
import type { Lifecycle } from "../lifecycle/lifecycle.ts";
import type { BackupsService } from "./backups.ts";

interface Log {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
}

/**
 * Writes an archive into DATA_DIR/backups/ every `intervalMs` (0: never) and keeps the newest
 * `keep`. The next one is due an interval after the newest already there, so restarts do not
 * postpone backups; a new server takes its first one an interval after it starts.
 */
export class BackupSchedule implements Lifecycle {
  readonly name = "backup schedule";
  readonly #backups: BackupsService;
  readonly #intervalMs: number;
  readonly #keep: number;
  readonly #log: Log;
  readonly #clock: Clock;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #stopped = true;

  constructor(options: {
    backups: BackupsService;
    intervalMs: number;
    keep: number;
    log: Log;
    clock: Clock;
  }) {
    this.#clock = options.clock;
    this.#backups = options.backups;
    this.#intervalMs = options.intervalMs;
    this.#keep = options.keep;
    this.#log = options.log;
  }

  async start(): Promise<void> {
    await this.#backups.removeLeftovers(); // a download or backup cut off by a crash or kill
    if (this.#intervalMs <= 0) return;
    this.#stopped = false;
    const newest = (await this.#backups.list()).at(-1);
    const now = this.#clock.now();
    const due = (newest ? newest.mtimeMs : now) + this.#intervalMs;
    this.#schedule(Math.max(0, due - now));
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#running; // a backup under way finishes (or fails) before the database closes
  }

  #schedule(delayMs: number): void {
    if (this.#stopped) return;
    // setTimeout holds at most 2^31-1 ms (~24.8 days); longer intervals wait in steps.
    const step = Math.min(delayMs, 2 ** 31 - 1);
    this.#timer = setTimeout(() => {
      if (step < delayMs) return this.#schedule(delayMs - step);
      this.#running = this.#run().finally(() => {
        this.#running = undefined;
        this.#schedule(this.#intervalMs);
      });
    }, step);
    this.#timer.unref();
  }

  async #run(): Promise<void> {
    try {
      const { file, size, manifest } = await this.#backups.writeScheduled();
      const removed = await this.#backups.prune(this.#keep);
      this.#log.info(
        { file, bytes: size, files: manifest.files.length, removed },
        `scheduled backup written: ${file} (${size} bytes${removed.length ? `; removed ${removed.length} older, keeping ${this.#keep}` : ""})`,
      );
    } catch (err) {
      if (
        err instanceof AppError &&
        (err.code === "insufficient_storage" || err.code === "backup_in_progress")
      )
        return this.#log.warn({ code: err.code }, `scheduled backup skipped: ${err.message}`);
      this.#log.warn({ err }, "scheduled backup failed; the next is tried an interval later");
    }
  }
}
