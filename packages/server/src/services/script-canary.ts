import type { Board } from "@sdk/protocol";
import { ScriptLoadError } from "@sdk/sandbox";
import type { RemoteSandbox } from "../scripts/pool.ts";
import { type HealthCounts, type HealthWatch, newHealthCounts, type RolloutHooks } from "./script-health.ts";

/** A project's sandboxes: the stable one (`running`) and, in a canary's window, the canary's for its members. */
export interface CanaryState {
  running?: { deploymentId: string; sandbox: RemoteSandbox };
  canary?: { deploymentId: string; sandbox: RemoteSandbox; members: Set<string> };
  /** Health counts while a rollout watches the project. */
  health?: HealthWatch;
}

/** A plain deploy whose trial found every onDeviceConnect throwing: it is not made live. */
export class CrashLoopError extends Error {}

/** The device is one of the project's canary members (while a canary is in its window). */
export const isMember = (p: CanaryState | undefined, deviceId: string): boolean =>
  p?.canary?.members.has(deviceId) === true;

/** The sandbox a device's messages go to: the canary's for its members, else the stable one. */
export const sandboxOf = (p: CanaryState | undefined, deviceId: string): RemoteSandbox | undefined =>
  isMember(p, deviceId) ? p!.canary!.sandbox : p?.running?.sandbox;

/** The project's sandboxes: the stable one and, in a canary's window, the canary's. */
export const sandboxesOf = (p: CanaryState | undefined): RemoteSandbox[] =>
  [p?.running?.sandbox, p?.canary?.sandbox].filter((s) => s !== undefined);

/** Back-pressure over both sandboxes (a canary's members go to its own): null, or when both have room. */
export function roomIn(sandboxes: RemoteSandbox[]): Promise<void> | null {
  const waits = sandboxes.map((s) => s.waitForRoom()).filter((w) => w !== null);
  return waits.length === 0 ? null : Promise.all(waits).then(() => {});
}

/** Counts a device's disconnect on its side while a rollout watches; false when none does. */
export function countDisconnect(p: CanaryState | undefined, deviceId: string): boolean {
  const side = deviceSide(p, deviceId);
  if (!side) return false;
  side.disconnects++;
  side.disconnected.set(deviceId, (side.disconnected.get(deviceId) ?? 0) + 1);
  return true;
}

/**
 * A device connected: it counts on its rollout side and attaches to its sandbox (its canary's for a
 * member). False when no stable sandbox runs for it (one has to start).
 */
export function attachConnected(
  p: CanaryState,
  deviceId: string,
  board: Board,
  devices: Map<string, Board>,
): boolean {
  const here = devices.has(deviceId);
  if (here) deviceSide(p, deviceId)?.devices.add(deviceId);
  const to = sandboxOf(p, deviceId);
  if (to && here) to.attach(deviceId, board);
  return to !== undefined;
}

/** Detaches from `sandbox` the devices that are no longer connected (they left while it was being set up). */
function detachGone(sandbox: RemoteSandbox, devices: Map<string, Board> | undefined): void {
  for (const deviceId of sandbox.devices) if (!devices?.has(deviceId)) sandbox.detach(deviceId);
}

/** Attaches the connected devices, a canary's members excepted, to a (stable) sandbox. */
export function attachStable(
  p: CanaryState | undefined,
  devices: Map<string, Board> | undefined,
  to: RemoteSandbox,
) {
  for (const [deviceId, board] of devices ?? []) if (!isMember(p, deviceId)) to.attach(deviceId, board);
}

/** Some connected device runs the stable deployment (is not a canary's member). */
export const anyStable = (p: CanaryState | undefined, devices: Map<string, Board> | undefined): boolean =>
  [...(devices?.keys() ?? [])].some((deviceId) => !isMember(p, deviceId));

/** The health side a device counts on while a rollout watches: the canary's members, or the rest. */
const deviceSide = (p: CanaryState | undefined, deviceId: string): HealthCounts | undefined =>
  p?.health && (isMember(p, deviceId) && p.health.canaryId ? p.health.canary : p.health.stable);

/** What the canary operations need of the script host (its per-project state and helpers). */
export interface CanaryHostContext {
  project(projectId: string): CanaryState & { restarts: number[] };
  /** The project's state if the host still keeps it (undefined once the project was deleted). */
  existing(projectId: string): CanaryState | undefined;
  connected(projectId: string): Map<string, Board> | undefined;
  load(projectId: string, deploymentId: string): Promise<RemoteSandbox>;
  /** Runs `fn` in the project's queue, its device messages held meanwhile. */
  holdingWhile(projectId: string, fn: () => Promise<void>): Promise<void>;
  attachAll(projectId: string, sandbox: RemoteSandbox): void;
  start(projectId: string): Promise<void>;
  /** The live deployment in the database (read inside the project's queue). */
  activeId(projectId: string): Promise<string | null>;
  log(projectId: string, deviceId: string, message: string): void;
  /** An error line in the log of each connected device of the project. */
  logAll(projectId: string, message: string): void;
  hooks(): RolloutHooks | undefined;
  onError(error: unknown): void;
  stopped(): boolean;
}

/** The canary's deployment is not the one in its window (already decided, or another one). */
export class NotTheCanaryError extends Error {}

/**
 * Version swaps of a project's scripts: a plain activation (`activate`), and a canary, the
 * project's second sandbox, which runs for its member devices while the stable deployment runs for
 * the others, then becomes the live sandbox (promote) or is dropped (roll back).
 */
export function canaryOperations(ctx: CanaryHostContext) {
  /** Moves devices out of `from` (their onDeviceDisconnect runs there first) before they attach elsewhere. */
  async function leave(from: RemoteSandbox | undefined, deviceIds: string[], to: RemoteSandbox) {
    if (!from) return;
    for (const deviceId of deviceIds) from.detach(deviceId);
    if (from.worker !== to.worker) await from.sync();
  }

  /** The project was deleted (or the server stops) while an operation awaited. */
  const gone = (projectId: string, p: CanaryState) => ctx.stopped() || ctx.existing(projectId) !== p;

  const attachMembers = (projectId: string, sandbox: RemoteSandbox, members: Set<string>) => {
    for (const [deviceId, board] of ctx.connected(projectId) ?? [])
      if (members.has(deviceId)) sandbox.attach(deviceId, board);
  };

  /** The canary's worker thread ended (not its doing): it loads again for its members, its window goes on. */
  function restart(projectId: string, deploymentId: string) {
    ctx
      .holdingWhile(projectId, async () => {
        const p = ctx.project(projectId);
        if (p.canary?.deploymentId !== deploymentId || !p.canary.sandbox.disposed) return;
        let sandbox: RemoteSandbox;
        try {
          sandbox = await ctx.load(projectId, deploymentId);
        } catch (error) {
          if (p.canary?.deploymentId === deploymentId)
            ctx.hooks()?.canaryFaulted(projectId, deploymentId, `it could not restart: ${String(error)}`);
          return;
        }
        if (gone(projectId, p) || p.canary?.deploymentId !== deploymentId) return sandbox.dispose();
        p.canary = { ...p.canary, sandbox };
        attachMembers(projectId, sandbox, p.canary.members);
      })
      .catch(ctx.onError);
  }

  return {
    /**
     * Counts the health of `canaryId` (null: none) and `stableId` from now on, the connected
     * devices of each side seen already.
     */
    watchHealth(projectId: string, canaryId: string | null, stableId: string | null, members: Set<string>) {
      const health: HealthWatch = {
        canaryId,
        stableId,
        canary: newHealthCounts(),
        stable: newHealthCounts(),
      };
      for (const deviceId of ctx.connected(projectId)?.keys() ?? [])
        (canaryId && members.has(deviceId) ? health.canary : health.stable).devices.add(deviceId);
      ctx.project(projectId).health = health;
    },

    /** Stops counting for `deploymentId`'s rollout (another rollout's counts are left alone). */
    unwatchHealth(projectId: string, deploymentId: string) {
      const p = ctx.existing(projectId);
      const h = p?.health;
      if (h && (h.canaryId ?? h.stableId) === deploymentId) p.health = undefined;
    },

    health: (projectId: string): HealthWatch | undefined => ctx.existing(projectId)?.health,

    /**
     * A sandbox of the project stopped: true when it was the canary's. Stopping itself rolls the
     * canary back (never restarted); a crash of its worker thread restarts it.
     */
    canaryFaulted(
      projectId: string,
      sandbox: RemoteSandbox,
      reason: string,
      kind: "script" | "crash",
    ): boolean {
      const canary = ctx.existing(projectId)?.canary;
      if (canary?.sandbox !== sandbox) return false;
      if (kind === "crash" && !ctx.stopped()) restart(projectId, canary.deploymentId);
      else ctx.hooks()?.canaryFaulted(projectId, canary.deploymentId, reason.split("\n")[0]!);
      return true;
    },

    /**
     * Loads the canary and moves its connected members onto it (the others stay on the stable
     * sandbox). Returns the live deployment it runs against, read in the project's queue. A bundle
     * that does not load, or a sandbox that stops while its instances start, throws ScriptLoadError
     * and the members go back to the stable version.
     */
    async startCanary(projectId: string, deploymentId: string, members: Set<string>): Promise<string | null> {
      let stableId: string | null = null;
      await ctx.holdingWhile(projectId, async () => {
        const p = ctx.project(projectId);
        stableId = await ctx.activeId(projectId);
        const sandbox = await ctx.load(projectId, deploymentId);
        if (gone(projectId, p)) {
          sandbox.dispose();
          throw new Error(ctx.stopped() ? "the server is stopping" : "the project was deleted");
        }
        const here = [...(ctx.connected(projectId)?.keys() ?? [])].filter((deviceId) =>
          members.has(deviceId),
        );
        const stable = p.running?.sandbox;
        await leave(stable, here, sandbox);
        // Members that disconnected meanwhile are not attached; those that leave from now on are detached below.
        attachMembers(projectId, sandbox, members);
        const fault = await sandbox.sync();
        const failed = fault !== null || sandbox.disposed;
        if (failed || gone(projectId, p)) {
          if (failed)
            for (const deviceId of here)
              ctx.log(
                projectId,
                deviceId,
                "the canary stopped while starting; this device runs the stable version again",
              );
          sandbox.dispose();
          if (stable && !stable.disposed && !gone(projectId, p)) ctx.attachAll(projectId, stable);
          if (!failed) throw new Error(ctx.stopped() ? "the server is stopping" : "the project was deleted");
          throw new ScriptLoadError(fault ?? "the canary stopped while starting");
        }
        detachGone(sandbox, ctx.connected(projectId));
        p.canary = { deploymentId, sandbox, members };
      });
      return stableId;
    },

    /**
     * The canary becomes the live sandbox for every device: `commit` (the database makes it the
     * live deployment) first, then the stable sandbox's devices move onto it. A canary whose
     * sandbox stopped after the commit is the live deployment now: it starts again.
     */
    promoteCanary(projectId: string, deploymentId: string, commit: () => Promise<void>): Promise<void> {
      return ctx.holdingWhile(projectId, async () => {
        const p = ctx.project(projectId);
        const canary = p.canary;
        if (canary?.deploymentId !== deploymentId) throw new NotTheCanaryError("no such canary to promote");
        if (canary.sandbox.disposed)
          throw new ScriptLoadError(canary.sandbox.fault ?? "the canary's scripts stopped");
        await commit();
        const previous = p.running;
        p.canary = undefined;
        p.restarts = [];
        // From here a disconnect detaches from the canary's sandbox (the live one).
        p.running = { deploymentId, sandbox: canary.sandbox };
        await leave(previous?.sandbox, previous?.sandbox.devices ?? [], canary.sandbox);
        previous?.sandbox.dispose();
        if (gone(projectId, p)) return;
        if (canary.sandbox.disposed) {
          if (p.running?.sandbox === canary.sandbox) p.running = undefined;
          if (ctx.connected(projectId)?.size) await ctx.start(projectId);
          return;
        }
        detachGone(canary.sandbox, ctx.connected(projectId));
        ctx.attachAll(projectId, canary.sandbox);
      });
    },

    /** Drops the canary's sandbox (when it runs `deploymentId`); its members go back to the stable version. */
    rollBackCanary(projectId: string, deploymentId: string): Promise<void> {
      return ctx.holdingWhile(projectId, async () => {
        const p = ctx.project(projectId);
        const canary = p.canary;
        if (canary?.deploymentId !== deploymentId) return;
        p.canary = undefined;
        if (!canary.sandbox.disposed) {
          for (const deviceId of canary.sandbox.devices) canary.sandbox.detach(deviceId);
          if (p.running && p.running.sandbox.worker !== canary.sandbox.worker) await canary.sandbox.sync();
          canary.sandbox.dispose();
        }
        if (gone(projectId, p)) return;
        if (p.running) ctx.attachAll(projectId, p.running.sandbox);
        else await ctx.start(projectId);
      });
    },

    /**
     * Makes a deployment live: loads it (the trial: a bundle that does not load throws
     * ScriptLoadError), moves every connected device's instance from the old version to the new one
     * (onDeviceDisconnect on the old, onDeviceConnect on the new; the device connections stay up),
     * then `commit`s (the database makes it the live one) and only then runs it. A version whose
     * sandbox stops itself while its instances start (memory cap, stack overflow) throws
     * ScriptLoadError with the reason, and the old version's instances start again.
     */
    activate(
      projectId: string,
      deploymentId: string,
      commit: () => Promise<void>,
      /** After the trial: a reason not to make it live (a crash loop), or null. */
      check?: () => string | null,
    ): Promise<string | null> {
      let previousId: string | null = null;
      return ctx
        .holdingWhile(projectId, async () => {
          const p = ctx.project(projectId);
          previousId = await ctx.activeId(projectId);
          const sandbox = await ctx.load(projectId, deploymentId);
          const previous = p.running;
          const restorePrevious = () => {
            if (previous && !previous.sandbox.disposed) ctx.attachAll(projectId, previous.sandbox);
          };
          if (ctx.connected(projectId)?.size) {
            if (previous) {
              for (const deviceId of previous.sandbox.devices) previous.sandbox.detach(deviceId);
              // The old instances' onDeviceDisconnect runs before the new ones' onDeviceConnect.
              if (previous.sandbox.worker !== sandbox.worker) await previous.sandbox.sync();
            }
            ctx.attachAll(projectId, sandbox);
            if ((await sandbox.sync()) !== null) {
              ctx.logAll(
                projectId,
                previous && !previous.sandbox.disposed
                  ? "the new deployment stopped while starting and was not made live; the previous one runs again"
                  : "the new deployment stopped while starting and was not made live",
              );
              restorePrevious();
              throw new ScriptLoadError(sandbox.fault ?? "the new deployment stopped while starting");
            }
            const refused = check?.() ?? null;
            if (refused !== null) {
              for (const deviceId of sandbox.devices) sandbox.detach(deviceId);
              sandbox.dispose();
              restorePrevious();
              throw new CrashLoopError(refused);
            }
          }
          try {
            await commit();
          } catch (error) {
            sandbox.dispose();
            restorePrevious();
            throw error;
          }
          p.restarts = [];
          previous?.sandbox.dispose();
          p.running = undefined;
          if (ctx.stopped() || !ctx.connected(projectId)?.size || sandbox.disposed) {
            sandbox.dispose();
            // A sandbox that stopped itself after its trial is the live one now: it starts again.
            if (!ctx.stopped() && ctx.connected(projectId)?.size) await ctx.start(projectId);
            return;
          }
          p.running = { deploymentId, sandbox };
          detachGone(sandbox, ctx.connected(projectId));
          ctx.attachAll(projectId, sandbox);
        })
        .then(() => previousId);
    },

    /** The devices connected to this server's scripts now. */
    connectedDevices: (projectId: string): string[] => [...(ctx.connected(projectId)?.keys() ?? [])],

    /** The deployment a project's canary runs, or null. */
    canaryDeployment: (projectId: string): string | null =>
      ctx.existing(projectId)?.canary?.deploymentId ?? null,
  };
}
