import { type CanaryTarget, type Rollout, type RolloutOptions, rolloutLimits } from "@sdk/protocol";
import { ScriptLoadError } from "@sdk/sandbox";
import { AppError } from "../errors.ts";
import type { EventBus, Unsubscribe } from "../events/bus.ts";
import type { Clock } from "../lib/clock.ts";
import type { DeploymentRow } from "../repositories/deployments.ts";
import type { Repositories } from "../repositories/index.ts";
import { type Principal, viewerOf } from "./auth.ts";
import type { DeviceLogsService } from "./device-logs.ts";
import { recoverRollouts } from "./rollout-recovery.ts";
import { canaryVerdict, crashLoop, shuffled } from "./rollout-rules.ts";
import { NotTheCanaryError } from "./script-canary.ts";
import { healthView, newHealthCounts } from "./script-health.ts";
import type { ScriptHostService } from "./script-host.ts";
import { iso } from "./views.ts";

/** A rollout in its window (a canary, or a plain deploy's first-minute watch), kept in memory. */
interface Live {
  projectId: string;
  deploymentId: string;
  version: number;
  actorId: string;
  rollout: Rollout;
  /** watch: the deployment live before, to go back to on a crash loop. */
  previousId: string | null;
  timer?: NodeJS.Timeout;
  /** The canary is still being started (no decision before it is), or a decision is under way. */
  busy: boolean;
}

const beforeNextDeploy = "promoted: no crash loop before the next deploy";

/** A plain deploy's watch found its deployment no longer live when rolling back (a later deploy replaced it). */
class ReplacedError extends Error {}
const emptyHealth = () => ({ canary: healthView(newHealthCounts()), stable: healthView(newHealthCounts()) });

/**
 * Staged deploys: a canary runs on some devices for a window, against the stable version on the
 * others, and is promoted at its end or rolled back as soon as it does worse (rollout-rules.ts); a
 * plain deploy is watched for a crash loop in its first minute.
 */
export function rolloutsService(deps: {
  repos: Pick<Repositories, "deployments" | "devices">;
  scripts: ScriptHostService;
  logs: DeviceLogsService;
  bus: EventBus;
  clock: Clock;
  /** A canary's window when the request names none (CANARY_WINDOW_SECONDS). */
  windowSeconds: number;
  onError: (error: unknown) => void;
  /**
   * One instance of a cluster (docs/scaling.md): canaries are refused (409
   * `canary_needs_one_instance`), and at boot only the rollouts whose window has long ended are
   * decided (a window still running is another instance's).
   */
  cluster?: boolean;
}) {
  const { repos, scripts, logs, bus, clock, onError } = deps;
  const live = new Map<string, Live>();
  /**
   * The project's rollout slot, taken synchronously when a deploy or activation request starts and
   * while a decision's side effects run: a canary holds it alone; plain deploys share it.
   */
  const slots = new Map<string, { canary: boolean; holders: number }>();
  /** The deployment each project's latest activation (plain deploy, rollback by hand) makes live. */
  const latest = new Map<string, string>();
  let unsubscribe: Unsubscribe | undefined;

  /** Holds a share of the slot (no check): canaries are refused until `release`d. */
  function hold(projectId: string, canary: boolean): () => void {
    const slot = slots.get(projectId) ?? { canary, holders: 0 };
    slot.holders++;
    slots.set(projectId, slot);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (--slot.holders === 0 && slots.get(projectId) === slot) slots.delete(projectId);
    };
  }

  const liveCanary = (projectId: string) => {
    const l = live.get(projectId);
    return l?.rollout.kind === "canary" ? l : undefined;
  };

  /** The rollout with the health counted so far while it is in its window. */
  function current(l: Live): Rollout {
    const h = scripts.health(l.projectId);
    if (!h || l.rollout.decision !== null) return l.rollout;
    return { ...l.rollout, health: { canary: healthView(h.canary), stable: healthView(h.stable) } };
  }

  /** A line in the log of each of the rollout's devices; settles once written. */
  const deviceLog = (l: Pick<Live, "projectId" | "rollout">, level: "info" | "warn", message: string) =>
    Promise.all(
      l.rollout.devices.map((deviceId) =>
        logs
          .append({ projectId: l.projectId, deviceId }, level, "system", message)
          .catch((error: unknown) => {
            if (!(error instanceof AppError)) onError(error);
          }),
      ),
    );

  /** Ends the rollout in memory with its decision; returns the rollout to store. */
  function decide(l: Live, decision: Rollout["decision"], reason: string): Rollout {
    clearTimeout(l.timer);
    l.rollout = { ...current(l), decision, reason, decidedAt: iso(clock.now()) };
    return l.rollout;
  }

  /** After a decision's side effects: the rollout leaves its window (another rollout's counts stay). */
  function finish(l: Live) {
    scripts.unwatchHealth(l.projectId, l.deploymentId);
    if (live.get(l.projectId) === l) live.delete(l.projectId);
  }

  async function rollBack(l: Live, reason: string): Promise<void> {
    if (l.busy) return;
    l.busy = true;
    // A plain deploy's rollback is an activation: no canary starts until it is done.
    const release = l.rollout.kind === "watch" ? hold(l.projectId, false) : () => {};
    // Once the swap and the database write are done (before the logs and events that follow).
    const done = () => {
      finish(l);
      release();
    };
    try {
      await rollBackNow(l, reason, done);
    } finally {
      done();
    }
  }

  async function rollBackNow(l: Live, reason: string, done: () => void): Promise<void> {
    const rollout = decide(l, "rolled_back", reason);
    const json = JSON.stringify(rollout);
    if (rollout.kind === "canary") {
      await scripts.rollBackCanary(l.projectId, l.deploymentId);
      // The stable one is (again) the live one, even if a failed promotion touched the database.
      await repos.deployments.markRolledBack(l.projectId, l.deploymentId, reason, json, l.previousId);
      done();
      void deviceLog(
        l,
        "warn",
        `deployment v${l.version} (canary) ${reason}; this device runs the stable version again`,
      );
    } else {
      const previousId = l.previousId!;
      let replaced = false;
      try {
        await scripts.activate(l.projectId, previousId, async () => {
          // A later deploy went live meanwhile: it stays, this one is only recorded as rolled back.
          if ((await repos.deployments.active(l.projectId))?.id !== l.deploymentId) throw new ReplacedError();
          await repos.deployments.markRolledBack(l.projectId, l.deploymentId, reason, json, previousId);
        });
      } catch (error) {
        if (!(error instanceof ReplacedError)) throw error;
        replaced = true;
        await repos.deployments.markRolledBack(l.projectId, l.deploymentId, reason, json, null);
      }
      done();
      // The previous version is live again (Home Assistant's entities follow it).
      const previous = await repos.deployments.active(l.projectId);
      if (!replaced && previous?.id === previousId)
        await bus.publish("deployment.activated", {
          actorId: l.actorId,
          projectId: l.projectId,
          deploymentId: previousId,
          version: previous.version,
        });
    }
    await bus.publish("deployment.rolled_back", {
      actorId: l.actorId,
      projectId: l.projectId,
      deploymentId: l.deploymentId,
      version: l.version,
      reason,
    });
  }

  async function promote(l: Live, reason: string): Promise<void> {
    if (l.busy) return;
    l.busy = true;
    const done = () => finish(l);
    try {
      await promoteNow(l, reason, done);
    } finally {
      done();
    }
  }

  async function promoteNow(l: Live, reason: string, done: () => void): Promise<void> {
    const rollout = decide(l, "promoted", reason);
    const json = JSON.stringify(rollout);
    if (rollout.kind === "watch") return repos.deployments.setRollout(l.deploymentId, json);
    try {
      await scripts.promoteCanary(l.projectId, l.deploymentId, async () => {
        await repos.deployments.activate(l.projectId, l.deploymentId, clock.now());
        await repos.deployments.setRollout(l.deploymentId, json);
      });
    } catch (error) {
      // Never left `canary`: a promotion that failed is a rollback (the stable version runs on).
      if (!(error instanceof ScriptLoadError) && !(error instanceof NotTheCanaryError)) onError(error);
      l.rollout = { ...l.rollout, decision: null, reason: null, decidedAt: null };
      return rollBackNow(
        l,
        error instanceof ScriptLoadError
          ? `rolled back: the canary's scripts stopped (${error.message})`
          : `rolled back: the promotion failed (${(error as Error).message})`,
        done,
      );
    }
    done();
    void deviceLog(l, "info", `deployment v${l.version} (canary) ${reason}; it now runs on every device`);
    await bus.publish("deployment.activated", {
      actorId: l.actorId,
      projectId: l.projectId,
      deploymentId: l.deploymentId,
      version: l.version,
    });
  }

  /** Rolls back at once when the health counted so far crosses a threshold. */
  function evaluate(projectId: string): Promise<void> | undefined {
    const l = live.get(projectId);
    const h = scripts.health(projectId);
    if (!l || !h || l.busy || !l.rollout.rollback) return undefined;
    // The counts are another rollout's (a plain deploy's trial under way meanwhile).
    if ((h.canaryId ?? h.stableId) !== l.deploymentId) return undefined;
    if (l.rollout.kind === "canary") {
      const reason = canaryVerdict(h);
      return reason === null ? undefined : rollBack(l, reason).catch(onError);
    }
    const loop = crashLoop(h.stable);
    if (loop === null || l.previousId === null) return undefined;
    return rollBack(l, `rolled back: ${loop} in the first minute`).catch(onError);
  }

  /** The window's end: the decision, its side effects done when the promise settles. */
  function windowEnded(l: Live): Promise<void> {
    if (l.busy || live.get(l.projectId) !== l) return Promise.resolve();
    if (l.rollout.kind === "watch") return promote(l, "promoted: no crash loop in the first minute");
    const h = scripts.health(l.projectId);
    const mine = h?.canaryId === l.deploymentId ? h : undefined;
    const verdict = mine ? canaryVerdict(mine) : null;
    if (verdict !== null && l.rollout.rollback) return rollBack(l, verdict);
    const c = mine?.canary ?? newHealthCounts();
    // Never promoted without having run anywhere.
    if (c.devices.size === 0)
      return rollBack(l, "rolled back: no canary device was connected during the window");
    return promote(
      l,
      `promoted: within the thresholds for ${l.rollout.windowSeconds} s on ${c.devices.size} device${c.devices.size === 1 ? "" : "s"} (${c.errors + c.timeouts} of ${c.calls} handler calls and ${c.commandErrors} of ${c.commands} commands failed)`,
    );
  }

  /** The rollout enters its window: a plain deploy's watch still there ends first (never replaced silently). */
  function schedule(l: Live, seconds: number) {
    const before = live.get(l.projectId);
    if (before && before !== l) {
      if (before.rollout.kind === "canary") throw new Error("a canary is already in its window");
      endWatch(l.projectId);
    }
    live.set(l.projectId, l);
    l.timer = setTimeout(() => windowEnded(l).catch(onError), seconds * 1000);
    l.timer.unref();
  }

  function rolloutOf(
    kind: Rollout["kind"],
    target: CanaryTarget | null,
    members: string[],
    stableDeploymentId: string | null,
    windowSeconds: number,
    rollback: boolean,
  ): Rollout {
    const now = clock.now();
    return {
      kind,
      target,
      devices: members,
      stableDeploymentId,
      windowSeconds,
      startedAt: iso(now),
      endsAt: iso(now + windowSeconds * 1000),
      decision: null,
      decidedAt: null,
      reason: null,
      rollback,
      health: emptyHealth(),
    };
  }

  /** A plain deploy's watch is over when the project deploys again. */
  function endWatch(projectId: string) {
    const l = live.get(projectId);
    if (l?.rollout.kind === "watch" && !l.busy) promote(l, beforeNextDeploy).catch(onError);
  }

  function refusal(projectId: string): AppError | null {
    const l = liveCanary(projectId);
    if (l)
      return new AppError(
        "rollout_in_progress",
        `Deployment v${l.version} is a canary until ${l.rollout.endsAt}: promote it or roll it back first`,
      );
    return null;
  }

  return {
    name: "rollouts",

    /**
     * Takes the project's rollout slot for a deploy or activation request (synchronously, before
     * any await); call the returned function when the request is done. 409 `rollout_in_progress`
     * while a canary is in its window, is starting, or is being decided; and for a canary while a
     * plain deploy is under way (or rolling back). Plain deploys share the slot: a new one ends the
     * previous one's first-minute watch (promoted "no crash loop before the next deploy").
     */
    take(projectId: string, canary: boolean): () => void {
      if (canary && deps.cluster)
        throw new AppError(
          "canary_needs_one_instance",
          "Canaries need a server of one instance: this one runs as several (a cluster). Deploy without --canary: plain deploys go live on every instance",
        );
      const refused = refusal(projectId);
      if (refused) throw refused;
      const slot = slots.get(projectId);
      if (slot?.canary)
        throw new AppError("rollout_in_progress", "A canary of this project is starting: wait for it");
      if (slot && canary)
        throw new AppError(
          "rollout_in_progress",
          "Another deploy of this project is under way: start the canary once it is done",
        );
      return hold(projectId, canary);
    },

    /** Deployments a rollout in its window may go back to or compare with: never pruned. */
    kept(projectId: string): string[] {
      const l = live.get(projectId);
      if (!l) return [];
      return [l.deploymentId, l.previousId, l.rollout.stableDeploymentId].filter((id) => id !== null);
    },

    /** The canary's members: every device with the tag, or a random share of the connected ones. 409 when none is connected. */
    async members(principal: Principal, projectId: string, target: CanaryTarget): Promise<Set<string>> {
      const online = scripts.connectedDevices(projectId);
      let members: string[];
      if ("tag" in target) {
        members = (await repos.devices.list(viewerOf(principal), projectId, target.tag)).map((d) => d.id);
        if (!members.some((id) => online.includes(id)))
          throw new AppError("no_canary_devices", `No device with the tag "${target.tag}" is connected`);
      } else {
        if (online.length === 0)
          throw new AppError("no_canary_devices", "No device of the project is connected");
        const n = Math.max(1, Math.ceil((online.length * target.percent) / 100));
        members = shuffled(online).slice(0, n);
      }
      return new Set(members);
    },

    /**
     * Runs a (pending or earlier) deployment as a canary on `members`. Returns its row as it is
     * after the start: `canary`, `failed` (it does not load), or already `rolled_back`.
     */
    async startCanary(
      principal: Principal,
      projectId: string,
      row: DeploymentRow,
      options: RolloutOptions & { canary: CanaryTarget },
      members: Set<string>,
    ): Promise<DeploymentRow> {
      const refused = refusal(projectId);
      if (refused) throw refused;
      endWatch(projectId);
      const windowSeconds = options.windowSeconds ?? deps.windowSeconds;
      const target = options.canary;
      const rollback = options.rollback ?? true;
      // Taken before any await: a second canary started meanwhile is refused.
      const l: Live = {
        projectId,
        deploymentId: row.id,
        version: row.version,
        actorId: principal.user.id,
        rollout: rolloutOf("canary", target, [...members].sort(), null, windowSeconds, rollback),
        previousId: null,
        busy: true,
      };
      live.set(projectId, l);
      let rollout = l.rollout;
      try {
        // The slot keeps other deploys out; the stable id is read again in the script host's queue.
        const before = (await repos.deployments.active(projectId))?.id ?? null;
        scripts.watchHealth(projectId, row.id, before, members);
        const stableId = await scripts.startCanary(projectId, row.id, members);
        const h = scripts.health(projectId);
        if (h?.canaryId === row.id) h.stableId = stableId;
        rollout = { ...rollout, stableDeploymentId: stableId };
        l.rollout = rollout;
        l.previousId = stableId;
      } catch (error) {
        if (live.get(projectId) === l) live.delete(projectId);
        scripts.unwatchHealth(projectId, row.id);
        if (!(error instanceof ScriptLoadError) && row.status !== "pending") throw error;
        const reason =
          error instanceof ScriptLoadError ? error.message : "the server could not start this canary";
        await repos.deployments.markFailed(row.id, reason);
        await bus.publish("deployment.failed", {
          actorId: principal.user.id,
          projectId,
          deploymentId: row.id,
        });
        if (!(error instanceof ScriptLoadError)) throw error;
        return { ...row, status: "failed", error: reason };
      }
      await repos.deployments.markCanary(row.id, JSON.stringify(rollout));
      schedule(l, windowSeconds);
      l.busy = false;
      await evaluate(projectId);
      return (await repos.deployments.find(viewerOf(principal), projectId, row.id)) ?? row;
    },

    /**
     * Right before an activation is queued (a plain deploy, a rollback by hand): the watch of the
     * deployment live so far ends, and this one is the project's latest.
     */
    activating(projectId: string, deploymentId: string): void {
      latest.set(projectId, deploymentId);
      endWatch(projectId);
    },

    /**
     * Before a plain deploy's trial: counts its health; returns the crash-loop check for the trial
     * (none for a project's first deployment: there is nothing to stay on).
     */
    beginWatch(
      projectId: string,
      deploymentId: string,
      rollback: boolean,
      hasPrevious: boolean,
    ): () => string | null {
      scripts.watchHealth(projectId, null, deploymentId, new Set());
      return () => {
        const h = scripts.health(projectId);
        const loop = rollback && hasPrevious && h?.stableId === deploymentId ? crashLoop(h.stable) : null;
        return loop === null ? null : `rolled back: ${loop} at once`;
      };
    },

    /**
     * The plain deploy went live: watched for its first minute, counted from now (the trial's
     * connects are not in it). One replaced meanwhile by a later activation is promoted at once.
     */
    async watchLive(actorId: string, row: DeploymentRow, previousId: string | null, rollback: boolean) {
      const replaced = () => latest.get(row.projectId) !== row.id;
      let rollout = rolloutOf("watch", null, [], previousId, rolloutLimits.watchSeconds, rollback);
      if (!replaced() && scripts.health(row.projectId)?.stableId === row.id)
        scripts.watchHealth(row.projectId, null, row.id, new Set());
      await repos.deployments.setRollout(row.id, JSON.stringify(rollout));
      if (replaced()) {
        scripts.unwatchHealth(row.projectId, row.id);
        rollout = { ...rollout, decision: "promoted", decidedAt: iso(clock.now()), reason: beforeNextDeploy };
        await repos.deployments.setRollout(row.id, JSON.stringify(rollout));
        return "active";
      }
      const l: Live = {
        projectId: row.projectId,
        deploymentId: row.id,
        version: row.version,
        actorId,
        rollout,
        previousId,
        busy: false,
      };
      schedule(l, rolloutLimits.watchSeconds);
      await evaluate(row.projectId);
      return l.rollout.decision === "rolled_back" ? "rolled_back" : "active";
    },

    /** The plain deploy's trial found a crash loop: it was not made live. */
    async rejectedAtTrial(actorId: string, row: DeploymentRow, previousId: string | null, reason: string) {
      scripts.unwatchHealth(row.projectId, row.id);
      const rollout: Rollout = {
        ...rolloutOf("watch", null, [], previousId, rolloutLimits.watchSeconds, true),
        decision: "rolled_back",
        decidedAt: iso(clock.now()),
        reason,
      };
      await repos.deployments.markRolledBack(row.projectId, row.id, reason, JSON.stringify(rollout), null);
      await bus.publish("deployment.rolled_back", {
        actorId,
        projectId: row.projectId,
        deploymentId: row.id,
        version: row.version,
        reason,
      });
    },

    /** The trial failed for another reason: nothing is watched. */
    cancelWatch: (projectId: string, deploymentId: string) => scripts.unwatchHealth(projectId, deploymentId),

    /** The deployment's rollout for the API: live figures while in its window. */
    view(row: DeploymentRow): Rollout | null {
      const l = live.get(row.projectId);
      if (l?.deploymentId === row.id) return current(l);
      return row.rollout ? (JSON.parse(row.rollout) as Rollout) : null;
    },

    /** Ends a canary in its window by hand: promoted (`promote`) or rolled back. */
    async decideByHand(principal: Principal, projectId: string, deploymentId: string, promoteIt: boolean) {
      const row = await repos.deployments.find(viewerOf(principal), projectId, deploymentId);
      if (!row) throw new AppError("not_found", "No such deployment");
      const l = liveCanary(projectId);
      if (!l || l.deploymentId !== row.id || l.busy)
        throw new AppError("conflict", `Deployment v${row.version} is not a canary in its window`);
      const who = principal.user.email;
      if (promoteIt) await promote(l, `promoted by hand (${who})`);
      else await rollBack(l, `rolled back by hand (${who})`);
    },

    /** Ends the project's rollout window now, as its timer would; resolves once decided (tests). */
    async endWindowForTests(projectId: string): Promise<void> {
      const l = live.get(projectId);
      if (!l) return;
      clearTimeout(l.timer);
      await windowEnded(l);
    },

    async start(): Promise<void> {
      scripts.setRolloutHooks({
        changed: (projectId) => void evaluate(projectId),
        canaryFaulted: (projectId, deploymentId, reason) => {
          const l = liveCanary(projectId);
          if (l?.deploymentId === deploymentId)
            rollBack(l, `rolled back: the canary's scripts stopped themselves (${reason})`).catch(onError);
        },
      });
      // A deleted project's rollout ends with it (its deployments are gone), whichever instance
      // of a cluster deleted it.
      unsubscribe = bus.subscribe(
        "project.deleted",
        ({ projectId }) => {
          clearTimeout(live.get(projectId)?.timer);
          live.delete(projectId);
          latest.delete(projectId);
        },
        { everywhere: true },
      );
      await recoverRollouts({ repos, bus, clock, deviceLog, cluster: deps.cluster ?? false }).catch(onError);
    },

    stop(): void {
      unsubscribe?.();
      for (const l of live.values()) clearTimeout(l.timer);
      live.clear();
    },
  };
}
export type RolloutsService = ReturnType<typeof rolloutsService>;
