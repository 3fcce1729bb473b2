import type { Clock } from "../lib/clock.ts";
import type { Lifecycle } from "../lifecycle/lifecycle.ts";
import type { ClusterRepository } from "./repository.ts";

interface Log {
  info(message: string): void;
  warn(message: string): void;
  error(obj: { err: unknown }, message: string): void;
}

export interface LeaseDeps {
  repo: ClusterRepository;
  clock: Clock;
  instanceId: string;
  leaseSeconds: number;
  log: Log;
  /** The device link's part (services/device-link.ts): presence, log lines, `device.disconnected`. */
  devices: {
    /** At boot: the online devices no live instance serves go offline (watchers are told). */
    markOfflineExcept(liveInstanceIds: string[]): Promise<void>;
    /** A dead instance's devices go offline, once across the cluster (watchers are told). */
    markInstanceOffline(deadInstanceId: string): Promise<void>;
  };
  /** This instance's connected devices (to reclaim them if it was ever taken for dead). */
  connected: () => string[];
}

/**
 * This instance's lease in PostgreSQL (docs/scaling.md). `begin()` at boot writes the row and
 * takes offline the devices that no live instance serves; `start()` renews it every third of
 * CLUSTER_LEASE_SECONDS, and each renewal sweeps: an instance whose lease ended is dead, and its
 * devices go offline (once: the one instance whose DELETE returns the dead row does it). A clean
 * `stop()` removes the row (its devices were already taken offline by the device link).
 */
export class InstanceLease implements Lifecycle {
  readonly name = "instance lease";
  readonly #deps: LeaseDeps;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #begun = false;

  constructor(deps: LeaseDeps) {
    this.#deps = deps;
  }

  /** At boot, before this instance serves any device. */
  async begin(): Promise<void> {
    const { repo, clock, instanceId } = this.#deps;
    const now = clock.now();
    await repo.upsertInstance({ id: instanceId, startedAt: now, leaseUntil: this.#until(now) });
    this.#begun = true;
    await this.#sweep(now);
    await this.#deps.devices.markOfflineExcept(await repo.liveInstances(instanceId, now));
  }

  start(): void {
    if (this.#timer) return;
    const every = (this.#deps.leaseSeconds * 1000) / 3;
    this.#timer = setInterval(() => {
      // One renewal at a time: a slow database must not pile them up.
      this.#running ??= this.renew().finally(() => {
        this.#running = undefined;
      });
    }, every);
    this.#timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#running;
    if (!this.#begun) return;
    this.#begun = false;
    try {
      await this.#deps.repo.deleteInstance(this.#deps.instanceId);
    } catch (err) {
      this.#deps.log.error({ err }, "removing this instance's lease failed (it expires by itself)");
    }
  }

  /**
   * Stops renewing and leaves the row, as a process that died would: the other instances take
   * this one for dead once the lease ends (tests of a crash in one process).
   */
  async halt(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#running;
    this.#begun = false;
  }

  /** Renews the lease, then sweeps the dead instances. Never rejects (it logs). */
  async renew(): Promise<void> {
    const { repo, clock, instanceId, log } = this.#deps;
    try {
      const now = clock.now();
      if (!(await repo.renewInstance(instanceId, this.#until(now)))) {
        // Renewals stalled past the lease (a paused process, a database outage) and another
        // instance took this one for dead: its devices were marked offline. They are still here.
        await repo.upsertInstance({ id: instanceId, startedAt: now, leaseUntil: this.#until(now) });
        const ids = this.#deps.connected();
        await repo.reclaim(instanceId, ids);
        log.warn(
          `instance ${instanceId}: its lease had expired (renewals stalled longer than ${this.#deps.leaseSeconds} s) ` +
            `and other instances took it for dead; lease taken again, ${ids.length} device(s) online here again`,
        );
      }
      await this.#sweep(now);
    } catch (err) {
      log.error({ err }, `instance ${instanceId}: renewing the lease failed`);
    }
  }

  async #sweep(now: number): Promise<void> {
    for (const dead of await this.#deps.repo.deleteExpired(now)) {
      this.#deps.log.warn(
        `instance ${dead} stopped renewing its lease: it is taken for dead and its devices go offline`,
      );
      await this.#deps.devices.markInstanceOffline(dead);
    }
  }

  #until(now: number): number {
    return now + this.#deps.leaseSeconds * 1000;
  }
}
