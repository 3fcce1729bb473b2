import type { Lifecycle } from "../lifecycle/lifecycle.ts";
import type { LostDevice } from "../repositories/devices.ts";
import type { Log } from "./nats.ts";
import type { ClusterRepository } from "./repository.ts";

export interface LeaseDeps {
  repo: ClusterRepository;
  instanceId: string;
  leaseSeconds: number;
  log: Log;
  /** The device link's part (services/device-link.ts): presence, log lines, events. */
  devices: {
    /** At boot: the online devices no live instance serves go offline (watchers are told). */
    markOfflineExcept(liveInstanceIds: string[]): Promise<void>;
    /** A dead instance's devices went offline (this instance's sweep did it): logs, watchers. */
    instanceLost(deadInstanceId: string, devices: LostDevice[]): Promise<void>;
    /**
     * At a clean stop: devices still online on this instance (their hello completed while it
     * stopped) went offline with its row (logs, watchers).
     */
    leftAtStop(devices: LostDevice[]): Promise<void>;
    /**
     * After this instance was taken for dead: `taken` are its own again (claim them, announce them
     * online); `lost` reconnected elsewhere or have a newer connection (let them go).
     */
    reclaimed(taken: string[], lost: string[]): Promise<void>;
  };
  /** This instance's connected devices and their generations (to reclaim them if it was taken for dead). */
  connected: () => { deviceId: string; generation: number }[];
}

/**
 * This instance's lease in PostgreSQL (docs/scaling.md). `begin()` at boot writes the row and
 * takes offline the devices that no live instance serves; `start()` renews it every third of
 * CLUSTER_LEASE_SECONDS, and each renewal sweeps: an instance whose lease ended is dead, and its
 * devices go offline (once: the one instance whose DELETE returns the dead row does it, in the same
 * transaction). Lease times are the database's clock. A clean `stop()` removes the row, and with it
 * takes offline any device still online here (the device link took the others offline).
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
    const { repo, instanceId } = this.#deps;
    await repo.upsertInstance(instanceId, this.#leaseMs);
    this.#begun = true;
    await this.#sweep();
    await this.#deps.devices.markOfflineExcept(await repo.liveInstances(instanceId));
  }

  start(): void {
    if (this.#timer) return;
    const every = this.#leaseMs / 3;
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
      const left = await this.#deps.repo.deleteInstance(this.#deps.instanceId);
      if (left.length > 0) await this.#deps.devices.leftAtStop(left);
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
    const { repo, instanceId, log } = this.#deps;
    try {
      if (!(await repo.renewInstance(instanceId, this.#leaseMs))) {
        // Renewals stalled past the lease (a paused process, a database outage) and another
        // instance took this one for dead: its devices were marked offline. They are still here,
        // unless they reconnected elsewhere meanwhile.
        await repo.upsertInstance(instanceId, this.#leaseMs);
        const connections = this.#deps.connected();
        const taken = await repo.reclaim(instanceId, connections);
        const mine = new Set(taken);
        const lost = connections.map((c) => c.deviceId).filter((id) => !mine.has(id));
        await this.#deps.devices.reclaimed(taken, lost);
        log.warn(
          `instance ${instanceId}: its lease had expired (renewals stalled longer than ${this.#deps.leaseSeconds} s) ` +
            `and other instances took it for dead; lease taken again, ${taken.length} device(s) online here again` +
            (lost.length > 0 ? `, ${lost.length} let go (they reconnected elsewhere)` : ""),
        );
      }
      await this.#sweep();
    } catch (err) {
      log.error({ err }, `instance ${instanceId}: renewing the lease failed`);
    }
  }

  async #sweep(): Promise<void> {
    for (const { instanceId, devices } of await this.#deps.repo.sweepExpired()) {
      this.#deps.log.warn(
        `instance ${instanceId} stopped renewing its lease: it is taken for dead and its devices go offline`,
      );
      await this.#deps.devices.instanceLost(instanceId, devices);
    }
  }

  get #leaseMs(): number {
    return this.#deps.leaseSeconds * 1000;
  }
}
