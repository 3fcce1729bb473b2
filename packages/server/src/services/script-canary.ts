import type { Board } from "@sdk/protocol";
import { ScriptLoadError } from "@sdk/sandbox";
import type { RemoteSandbox } from "../scripts/pool.ts";
import { type HealthCounts, type HealthWatch, newHealthCounts } from "./script-health.ts";

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

/** Counts a device's disconnect on its side while a rollout watches; false when none does. */
export function countDisconnect(p: CanaryState | undefined, deviceId: string): boolean {
  const side = deviceSide(p, deviceId);
  if (side) side.disconnects++;
  return side !== undefined;
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
export const deviceSide = (p: CanaryState | undefined, deviceId: string): HealthCounts | undefined =>
  p?.health && (isMember(p, deviceId) && p.health.canaryId ? p.health.canary : p.health.stable);

/** What the canary operations need of the script host (its per-project state and helpers). */
export interface CanaryHostContext {
  project(projectId: string): CanaryState & { restarts: number[] };
  connected(projectId: string): Map<string, Board> | undefined;
  load(projectId: string, deploymentId: string): Promise<RemoteSandbox>;
  /** Runs `fn` in the project's queue, its device messages held meanwhile. */
  holdingWhile(projectId: string, fn: () => Promise<void>): Promise<void>;
  attachAll(projectId: string, sandbox: RemoteSandbox): void;
  start(projectId: string): Promise<void>;
  log(projectId: string, deviceId: string, message: string): void;
  stopped(): boolean;
}

/**
 * A project's second sandbox: a canary runs for its member devices while the stable deployment
 * runs for the others; then it becomes the live sandbox (promote) or is dropped (roll back).
 */
export function canaryOperations(ctx: CanaryHostContext) {
  /** Moves devices out of `from` (their onDeviceDisconnect runs there first) before they attach elsewhere. */
  async function leave(from: RemoteSandbox | undefined, deviceIds: string[], to: RemoteSandbox) {
    if (!from) return;
    for (const deviceId of deviceIds) from.detach(deviceId);
    if (from.worker !== to.worker) await from.sync();
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

    unwatchHealth(projectId: string) {
      ctx.project(projectId).health = undefined;
    },

    health: (projectId: string): HealthWatch | undefined => ctx.project(projectId).health,

    /**
     * Loads the canary and moves its connected members onto it (the others stay on the stable
     * sandbox). A bundle that does not load, or a sandbox that stops while its instances start,
     * throws ScriptLoadError and the members go back to the stable version.
     */
    startCanary(projectId: string, deploymentId: string, members: Set<string>): Promise<void> {
      return ctx.holdingWhile(projectId, async () => {
        const sandbox = await ctx.load(projectId, deploymentId);
        const p = ctx.project(projectId);
        if (ctx.stopped()) {
          sandbox.dispose();
          throw new Error("the server is stopping");
        }
        const here = [...(ctx.connected(projectId) ?? [])].filter(([deviceId]) => members.has(deviceId));
        const stable = p.running?.sandbox;
        await leave(
          stable,
          here.map(([deviceId]) => deviceId),
          sandbox,
        );
        for (const [deviceId, board] of here) sandbox.attach(deviceId, board);
        const fault = await sandbox.sync();
        if (fault !== null || sandbox.disposed) {
          for (const [deviceId] of here)
            ctx.log(
              projectId,
              deviceId,
              "the canary stopped while starting; this device runs the stable version again",
            );
          if (stable && !stable.disposed) ctx.attachAll(projectId, stable);
          throw new ScriptLoadError(fault ?? "the canary stopped while starting");
        }
        p.canary = { deploymentId, sandbox, members };
      });
    },

    /**
     * The canary becomes the live sandbox for every device: `commit` (the database makes it the
     * live deployment) first, then the stable sandbox's devices move onto it.
     */
    promoteCanary(projectId: string, commit: () => Promise<void>): Promise<void> {
      return ctx.holdingWhile(projectId, async () => {
        const p = ctx.project(projectId);
        const canary = p.canary;
        if (!canary) throw new Error("no canary to promote");
        if (canary.sandbox.disposed)
          throw new ScriptLoadError(canary.sandbox.fault ?? "the canary's scripts stopped");
        await commit();
        const previous = p.running;
        p.canary = undefined;
        await leave(previous?.sandbox, previous?.sandbox.devices ?? [], canary.sandbox);
        previous?.sandbox.dispose();
        p.running = { deploymentId: canary.deploymentId, sandbox: canary.sandbox };
        p.restarts = [];
        ctx.attachAll(projectId, canary.sandbox);
      });
    },

    /** Drops the canary's sandbox; its members go back to the stable version. */
    rollBackCanary(projectId: string): Promise<void> {
      return ctx.holdingWhile(projectId, async () => {
        const p = ctx.project(projectId);
        const canary = p.canary;
        if (!canary) return;
        p.canary = undefined;
        if (!canary.sandbox.disposed) {
          for (const deviceId of canary.sandbox.devices) canary.sandbox.detach(deviceId);
          if (p.running && p.running.sandbox.worker !== canary.sandbox.worker) await canary.sandbox.sync();
          canary.sandbox.dispose();
        }
        if (p.running) ctx.attachAll(projectId, p.running.sandbox);
        else await ctx.start(projectId);
      });
    },

    /** The devices connected to this server's scripts now. */
    connectedDevices: (projectId: string): string[] => [...(ctx.connected(projectId)?.keys() ?? [])],

    /** The deployment a project's canary runs, or null. */
    canaryDeployment: (projectId: string): string | null =>
      ctx.project(projectId).canary?.deploymentId ?? null,
  };
}
