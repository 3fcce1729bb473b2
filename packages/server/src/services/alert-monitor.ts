import type { EventBus, Unsubscribe } from "../events/bus.ts";
import type { Clock } from "../lib/clock.ts";
import type { Lifecycle } from "../lifecycle/lifecycle.ts";
import type { AlertRuleRow } from "../repositories/alerts.ts";
import type { Repositories } from "../repositories/index.ts";
import type { Alert, AlertsService } from "./alerts.ts";

const minute = 60_000;
/** In a cluster, how long the rules read are used before they are read again. */
const sharedRulesMs = 5_000;
const server = { userId: "", isAdmin: true };

/**
 * Turns events into alerts by the project's rules, and drives the webhook delivery queue.
 *
 * Episodes (one alert each, recorded in `alertEpisodes` so a restart does not repeat them):
 * - device_offline: a device that stays disconnected N minutes in a row raises `device.offline`;
 *   when it reconnects, `device.online` follows and the episode ends. A device that comes back
 *   within N minutes raises nothing, so a flapping device alerts at most once per N minutes.
 * - script_errors: `count` script failures of one device within `windowMinutes` raise
 *   `script.errors` once; the episode ends after a whole window without a failure.
 * - deployment: every failed deployment raises `deployment.failed` once; making an older
 *   deployment live again while a newer one exists raises `deployment.rolled_back`, and so does a
 *   canary (or a crash-looping plain deploy) rolled back by the server, with its reason.
 *
 * In a cluster (docs/scaling.md) each event is published once, on one instance, so each alert is
 * raised once: by the instance that heard the disconnect, the script failure, the deployment
 * event. Two things cross instances: a device that went offline on one instance may come back on
 * another (device.connected is heard everywhere, and the database's presence is read before
 * device.offline is raised, in case that event was missed); and the episode its device.offline
 * opened is closed, with device.online, by whichever instance closes it in the database first.
 */
export class AlertMonitor implements Lifecycle {
  readonly name = "alerts";
  readonly #alerts: AlertsService;
  readonly #repos: Pick<Repositories, "deployments" | "devices">;
  readonly #bus: EventBus;
  readonly #clock: Clock;
  readonly #onError: (error: unknown) => void;
  readonly #isOnline: (deviceId: string) => boolean;
  readonly #tickMs: number;
  readonly #shared: boolean;
  #unsubscribe: Unsubscribe[] = [];
  #timer: NodeJS.Timeout | undefined;
  #ticking: Promise<void> | undefined;
  #ready: Promise<void> | undefined;
  #inFlight = new Set<Promise<void>>();
  #offline = new Map<string, { projectId: string; since: number }>();
  #failures = new Map<string, { projectId: string; times: number[] }>();
  /** `ruleId deviceId` of the episodes whose alert was sent. */
  #alerted = new Set<string>();
  #rules = new Map<string, AlertRuleRow[]>();
  #rulesVersion = -1;
  /** In a cluster: when the cached rules were read (rules change through other instances too). */
  #rulesReadAt = 0;

  constructor(deps: {
    alerts: AlertsService;
    repos: Pick<Repositories, "deployments" | "devices">;
    bus: EventBus;
    clock: Clock;
    onError: (error: unknown) => void;
    /**
     * Whether a device is connected now to this instance (no query: asked every tick for each
     * device offline); the database's presence is read as well before device.offline is raised.
     */
    isOnline: (deviceId: string) => boolean;
    /**
     * Other instances serve devices too (a cluster): a device.offline episode may have been opened
     * by another instance, so the instance serving a device that connects closes it if open; and
     * rules change through the others, so the rules read are used for 5 s at most. Default: what
     * the alerts service says.
     */
    shared?: boolean;
    tickMs?: number;
  }) {
    this.#alerts = deps.alerts;
    this.#repos = deps.repos;
    this.#bus = deps.bus;
    this.#clock = deps.clock;
    this.#onError = deps.onError;
    this.#isOnline = deps.isOnline;
    this.#tickMs = deps.tickMs ?? 1000;
    this.#shared = deps.shared ?? deps.alerts.shared;
  }

  /**
   * Subscribes at once (no presence event is missed while the server starts), then loads the open
   * episodes and the devices still offline from before the restart; handlers wait for that load.
   */
  start(): void {
    // Only until the load has read who is offline: then it is dropped (idle boards are many).
    let connectedSinceStart: Set<string> | undefined = new Set<string>();
    const ready = this.#load(connectedSinceStart, this.#clock.now()).finally(() => {
      connectedSinceStart = undefined;
    });
    this.#ready = ready;
    // A device that went offline here may come back, or be deleted, through another instance.
    const everywhere = { everywhere: true };
    this.#unsubscribe.push(
      this.#bus.subscribe("device.disconnected", (e) => {
        this.#offline.set(e.deviceId, { projectId: e.projectId, since: this.#clock.now() });
      }),
      this.#bus.subscribe(
        "device.connected",
        async (e) => {
          connectedSinceStart?.add(e.deviceId);
          const since = this.#offline.get(e.deviceId)?.since;
          this.#offline.delete(e.deviceId);
          await ready;
          await this.#online(e.projectId, e.deviceId, since);
        },
        everywhere,
      ),
      this.#bus.subscribe(
        "device.deleted",
        (e) => {
          this.#offline.delete(e.deviceId);
          this.#failures.delete(e.deviceId);
        },
        everywhere,
      ),
      this.#bus.subscribe("script.failed", async (e) => {
        await ready;
        await this.#scriptFailed(e.projectId, e.deviceId);
      }),
      this.#bus.subscribe("deployment.failed", async (e) => {
        await ready;
        await this.#deploymentFailed(e.projectId, e.deploymentId);
      }),
      this.#bus.subscribe("deployment.rolled_back", async (e) => {
        await ready;
        await this.#deploymentRolledBack(e.projectId, e.deploymentId, e.version, e.reason);
      }),
      this.#bus.subscribe("deployment.activated", async (e) => {
        await ready;
        await this.#deploymentActivated(e.projectId, e.deploymentId, e.version);
      }),
    );
    this.#timer = setInterval(() => {
      this.#ticking ??= ready
        .then(() => this.#tick())
        .catch(this.#onError)
        .finally(() => {
          this.#ticking = undefined;
        });
    }, this.#tickMs);
    this.#timer.unref();
  }

  async #load(connectedSinceStart: Set<string>, startedAt: number): Promise<void> {
    try {
      for (const e of await this.#alerts.openEpisodes()) {
        this.#alerted.add(`${e.ruleId} ${e.subject}`);
        // A script_errors episode ends after a quiet window; the failures before the restart are
        // gone, so the window counts from the start (else the episode, and every later burst,
        // would stay silent for good).
        if (e.kind === "script_errors" && e.projectId && !this.#failures.has(e.subject)) {
          this.#failures.set(e.subject, { projectId: e.projectId, times: [startedAt] });
        }
      }
      for (const d of await this.#alerts.offlineWatched()) {
        if (connectedSinceStart.has(d.id) || this.#offline.has(d.id)) continue;
        // Counted from the start: the server's own downtime is not the device's.
        this.#offline.set(d.id, { projectId: d.projectId, since: startedAt });
      }
    } catch (error) {
      this.#onError(error);
    }
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    for (const off of this.#unsubscribe.splice(0)) off();
    await this.#ready;
    await this.#ticking;
    await this.#alerts.stop();
    await Promise.all([...this.#inFlight]);
  }

  async #rulesOf(projectId: string, kind: AlertRuleRow["kind"]): Promise<AlertRuleRow[]> {
    const now = this.#clock.now();
    const stale = this.#shared && now - this.#rulesReadAt >= sharedRulesMs;
    if (this.#rulesVersion !== this.#alerts.rulesVersion() || stale) {
      this.#rules.clear();
      this.#rulesVersion = this.#alerts.rulesVersion();
      this.#rulesReadAt = now;
    }
    let rules = this.#rules.get(projectId);
    if (!rules) {
      rules = await this.#alerts.rulesOf(projectId);
      this.#rules.set(projectId, rules);
    }
    return rules.filter((r) => r.kind === kind);
  }

  async #raise(alert: Alert): Promise<void> {
    const ids = await this.#alerts.raise(alert);
    for (const id of ids) this.#background(this.#alerts.attempt(id));
  }

  /** Deliveries run beside the tick (a slow receiver must not hold up the rules); stop() bounds them. */
  #background(work: Promise<void>): void {
    const tracked = work.catch(this.#onError).finally(() => this.#inFlight.delete(tracked));
    this.#inFlight.add(tracked);
  }

  async #tick(): Promise<void> {
    const now = this.#clock.now();
    for (const [deviceId, { projectId, since }] of this.#offline) {
      // Reconnected, and its device.connected not handled yet: it is not offline.
      if (this.#isOnline(deviceId)) continue;
      let presence: "offline" | "online" | "gone" | undefined;
      for (const rule of await this.#rulesOf(projectId, "device_offline")) {
        const key = `${rule.id} ${deviceId}`;
        if (this.#alerted.has(key) || now - since < (rule.minutes ?? 0) * minute) continue;
        // Back on another instance (its device.connected not heard), or deleted: no alert. (In one
        // process, "online" is only the disconnect's write not committed yet: the next tick sees it.)
        presence ??= await this.#presence(projectId, deviceId);
        if (presence === "gone" || (presence === "online" && this.#shared)) this.#offline.delete(deviceId);
        if (presence !== "offline") break;
        this.#alerted.add(key);
        if (!(await this.#alerts.openEpisode(rule.id, deviceId))) continue;
        await this.#raise({
          projectId,
          type: "device.offline",
          rule,
          deviceId,
          message: `Device offline for ${rule.minutes} minutes`,
          details: { offlineSince: new Date(since).toISOString() },
        });
      }
    }
    for (const [deviceId, { projectId, times }] of this.#failures) {
      for (const rule of await this.#rulesOf(projectId, "script_errors")) {
        const key = `${rule.id} ${deviceId}`;
        const last = times.at(-1) ?? 0;
        if (this.#alerted.has(key) && now - last >= (rule.windowMinutes ?? 0) * minute) {
          this.#alerted.delete(key);
          await this.#alerts.closeEpisode(rule.id, deviceId);
        }
      }
      const longest = Math.max(
        0,
        ...(await this.#rulesOf(projectId, "script_errors")).map((r) => r.windowMinutes ?? 0),
      );
      if (times.every((t) => now - t >= longest * minute)) this.#failures.delete(deviceId);
    }
    await this.#alerts.deliverDue(this.#onError);
  }

  /** The device's presence in the database (another instance may serve it now). */
  async #presence(projectId: string, deviceId: string): Promise<"offline" | "online" | "gone"> {
    const row = await this.#repos.devices.find(server, projectId, deviceId);
    return row ? row.status : "gone";
  }

  async #online(projectId: string, deviceId: string, since: number | undefined): Promise<void> {
    for (const rule of await this.#rulesOf(projectId, "device_offline")) {
      const key = `${rule.id} ${deviceId}`;
      // Alerted here; or, in a cluster, maybe by another instance: the one serving the device now
      // closes the episode (the database says whether it was open; one closer wins).
      const alertedHere = this.#alerted.delete(key);
      if (!alertedHere && !(this.#shared && this.#isOnline(deviceId))) continue;
      if (!(await this.#alerts.closeEpisode(rule.id, deviceId))) continue;
      await this.#raise({
        projectId,
        type: "device.online",
        rule,
        deviceId,
        message: "Device back online",
        details: since === undefined ? {} : { offlineSince: new Date(since).toISOString() },
      });
    }
  }

  async #scriptFailed(projectId: string, deviceId: string): Promise<void> {
    const rules = await this.#rulesOf(projectId, "script_errors");
    if (rules.length === 0) return;
    const now = this.#clock.now();
    const longest = Math.max(...rules.map((r) => r.windowMinutes ?? 0)) * minute;
    const entry = this.#failures.get(deviceId) ?? { projectId, times: [] };
    entry.times.push(now);
    while (entry.times.length > 0 && now - entry.times[0]! > longest) entry.times.shift();
    // Only the newest `count` failures decide anything: the list stays that short however many come.
    const most = Math.max(...rules.map((r) => r.count ?? 1));
    if (entry.times.length > most) entry.times.splice(0, entry.times.length - most);
    this.#failures.set(deviceId, entry);
    for (const rule of rules) {
      const key = `${rule.id} ${deviceId}`;
      const window = (rule.windowMinutes ?? 0) * minute;
      const inWindow = entry.times.filter((t) => now - t < window).length;
      if (this.#alerted.has(key) || inWindow < (rule.count ?? 1)) continue;
      this.#alerted.add(key);
      if (!(await this.#alerts.openEpisode(rule.id, deviceId))) continue;
      await this.#raise({
        projectId,
        type: "script.errors",
        rule,
        deviceId,
        message: `The device's script failed ${inWindow} times within ${rule.windowMinutes} minutes`,
        details: { failures: inWindow },
      });
    }
  }

  async #deploymentFailed(projectId: string, deploymentId: string): Promise<void> {
    const rules = await this.#rulesOf(projectId, "deployment");
    if (rules.length === 0) return;
    const deployment = await this.#repos.deployments.find(server, projectId, deploymentId);
    for (const rule of rules) {
      if (!(await this.#alerts.openEpisode(rule.id, deploymentId))) continue;
      await this.#raise({
        projectId,
        type: "deployment.failed",
        rule,
        deployment: { id: deploymentId, version: deployment?.version ?? 0 },
        message: `Deployment v${deployment?.version ?? "?"} failed: ${deployment?.error ?? "it did not load"}`,
        details: { error: deployment?.error ?? null },
      });
    }
  }

  async #deploymentActivated(projectId: string, deploymentId: string, version: number): Promise<void> {
    const rules = await this.#rulesOf(projectId, "deployment");
    if (rules.length === 0) return;
    const newer = (await this.#repos.deployments.list(server, projectId)).filter(
      (d) => d.version > version && d.status !== "failed" && d.status !== "rolled_back",
    );
    if (newer.length === 0) return;
    const from = Math.max(...newer.map((d) => d.version));
    for (const rule of rules) {
      await this.#raise({
        projectId,
        type: "deployment.rolled_back",
        rule,
        deployment: { id: deploymentId, version },
        message: `Rolled back to deployment v${version} (from v${from})`,
        details: { fromVersion: from },
      });
    }
  }

  async #deploymentRolledBack(projectId: string, deploymentId: string, version: number, reason: string) {
    const rules = await this.#rulesOf(projectId, "deployment");
    for (const rule of rules) {
      if (!(await this.#alerts.openEpisode(rule.id, deploymentId))) continue;
      await this.#raise({
        projectId,
        type: "deployment.rolled_back",
        rule,
        deployment: { id: deploymentId, version },
        message: `Deployment v${version} was rolled back: ${reason}`,
        details: { reason },
      });
    }
  }
}
