import type { Board, LogLevel } from "@sdk/protocol";
import { ProjectSandbox, type SandboxHost, ScriptLoadError } from "@sdk/sandbox";
import { AppError } from "../errors.ts";
import type { EventBus, Unsubscribe } from "../events/bus.ts";
import type { Repositories } from "../repositories/index.ts";
import type { ProjectFiles } from "../storage/project-files.ts";
import type { Principal } from "./auth.ts";
import type { DeviceLinkService } from "./device-link.ts";
import { type DeviceLogsService, type DeviceRef, requireVisibleDevice } from "./device-logs.ts";
import type { DeviceStateService } from "./device-state.ts";
import type { EnvVarsService } from "./env-vars.ts";

/** A project's running scripts: its sandbox and the deployment it runs. */
interface Running {
  deploymentId: string;
  sandbox: ProjectSandbox;
}

const restartWindowMs = 5 * 60_000;
const maxRestarts = 3;

/**
 * Runs each project's live deployment for its connected devices: a sandbox per project with
 * connected devices, one script instance per device. Swaps versions without touching device
 * connections, passes env var changes in, and restarts a project whose scripts hit the memory cap.
 */
export function scriptHostService(deps: {
  repos: Pick<Repositories, "deployments" | "devices">;
  bus: EventBus;
  files: ProjectFiles;
  link: DeviceLinkService;
  logs: DeviceLogsService;
  state: DeviceStateService;
  env: EnvVarsService;
  limits: { timeoutMs: number; memoryLimitMb: number };
  /** The server's base URL, for absolute `SdkError.docs` in scripts (read when a sandbox loads). */
  docsBaseUrl: () => string;
  onError: (error: unknown) => void;
}) {
  const { repos, bus, files, link, logs, state, env, limits, onError } = deps;
  const running = new Map<string, Running>();
  /** Connected devices per project, whether or not a script runs for them. */
  const connected = new Map<string, Map<string, Board>>();
  const starting = new Map<string, Promise<Running | null>>();
  const restarts = new Map<string, number[]>();
  let stopped = false;
  let unsubscribe: Unsubscribe[] = [];

  const log = (device: DeviceRef, level: LogLevel, message: string) => {
    void logs.append(device, level, "script", message);
  };

  const hostFor = (projectId: string): SandboxHost => ({
    command: (deviceId, type, args) =>
      link.command({ projectId, deviceId }, type, args).catch((error: unknown) => {
        throw error instanceof AppError ? { code: error.code, message: error.message } : error;
      }),
    emitState: (deviceId, entityId, value) => {
      state.record({ projectId, deviceId }, entityId, value).catch((error: unknown) => {
        if (error instanceof AppError) log({ projectId, deviceId }, "error", `emitState: ${error.message}`);
        else onError(error);
      });
    },
    send: (deviceId, message) => {
      try {
        link.sendRaw({ projectId, deviceId }, message);
      } catch (error) {
        log({ projectId, deviceId }, "error", `send: ${(error as Error).message}`);
      }
    },
    log: (deviceId, level, message) => log({ projectId, deviceId }, level, message),
  });

  /** Loads a deployment into a fresh sandbox. Throws ScriptLoadError when the bundle does not load. */
  async function load(projectId: string, deploymentId: string): Promise<ProjectSandbox> {
    const { bundle, sourceMap } = await files.readDeployment(projectId, deploymentId);
    return ProjectSandbox.load({
      projectId,
      bundle,
      sourceMap,
      env: await env.forScripts(projectId),
      host: hostFor(projectId),
      limits: { timeoutMs: limits.timeoutMs, memoryBytes: limits.memoryLimitMb * 1024 * 1024 },
      docsBaseUrl: deps.docsBaseUrl(),
      onFault: (reason) => void restart(projectId, reason),
    });
  }

  function attachAll(projectId: string, sandbox: ProjectSandbox) {
    for (const [deviceId, board] of connected.get(projectId) ?? []) sandbox.attach(deviceId, board);
  }

  /** The running scripts of a project, started from its live deployment if needed. */
  function ensure(projectId: string): Promise<Running | null> {
    const current = running.get(projectId);
    if (current) return Promise.resolve(current);
    let pending = starting.get(projectId);
    if (!pending) {
      pending = (async () => {
        const deployment = await repos.deployments.active(projectId);
        if (!deployment || stopped) return null;
        try {
          const sandbox = await load(projectId, deployment.id);
          const entry = { deploymentId: deployment.id, sandbox };
          running.set(projectId, entry);
          attachAll(projectId, sandbox);
          return entry;
        } catch (error) {
          const message = error instanceof ScriptLoadError ? error.message : String(error);
          for (const deviceId of connected.get(projectId)?.keys() ?? []) {
            log({ projectId, deviceId }, "error", `the deployed script could not start: ${message}`);
          }
          if (!(error instanceof ScriptLoadError)) onError(error);
          return null;
        }
      })().finally(() => starting.delete(projectId));
      starting.set(projectId, pending);
    }
    return pending;
  }

  async function restart(projectId: string, reason: string) {
    running.delete(projectId); // the sandbox disposed itself
    if (stopped || (connected.get(projectId)?.size ?? 0) === 0) return;
    const now = Date.now();
    const recent = (restarts.get(projectId) ?? []).filter((t) => t > now - restartWindowMs);
    recent.push(now);
    restarts.set(projectId, recent);
    if (recent.length > maxRestarts) {
      for (const deviceId of connected.get(projectId)?.keys() ?? []) {
        log(
          { projectId, deviceId },
          "error",
          `scripts stopped: they failed ${recent.length} times within 5 minutes (${reason}); deploy again to restart them`,
        );
      }
      return;
    }
    await ensure(projectId);
  }

  function connect(device: DeviceRef, board: Board) {
    let devices = connected.get(device.projectId);
    if (!devices) {
      devices = new Map();
      connected.set(device.projectId, devices);
    }
    devices.set(device.deviceId, board);
    void ensure(device.projectId).then((entry) => {
      if (entry && devices.has(device.deviceId)) entry.sandbox.attach(device.deviceId, board);
    }, onError);
  }

  function disconnect(device: DeviceRef) {
    const devices = connected.get(device.projectId);
    devices?.delete(device.deviceId);
    const entry = running.get(device.projectId);
    entry?.sandbox.detach(device.deviceId);
    if (devices && devices.size === 0) {
      connected.delete(device.projectId);
      // No device left: free the project's memory until one connects again.
      if (entry) {
        entry.sandbox.dispose();
        running.delete(device.projectId);
      }
    }
  }

  return {
    name: "script host",

    start(): void {
      stopped = false;
      unsubscribe = [
        bus.subscribe("device.connected", (device) => connect(device, device.board)),
        bus.subscribe("device.disconnected", disconnect),
        bus.subscribe("device.message", ({ projectId, deviceId, message }) => {
          running.get(projectId)?.sandbox.deliver(deviceId, message);
        }),
        // Returned, so the request that changed a variable answers once running scripts see it.
        bus.subscribe("env.changed", async ({ projectId }) => {
          const entry = running.get(projectId);
          if (!entry) return;
          entry.sandbox.setEnv(await env.forScripts(projectId));
        }),
      ];
    },

    /**
     * Runs a new live deployment: loads it, then moves every connected device's instance from the
     * old version to the new one (onDeviceDisconnect on the old, onDeviceConnect on the new). The
     * device connections stay up. With no device connected it only checks that the bundle loads.
     * Throws ScriptLoadError (a syntax error, an exception at top level), leaving the old version.
     */
    async activate(projectId: string, deploymentId: string): Promise<void> {
      restarts.delete(projectId);
      await starting.get(projectId);
      const sandbox = await load(projectId, deploymentId);
      if (!connected.has(projectId)) {
        sandbox.dispose(); // it starts when a device connects
        return;
      }
      const previous = running.get(projectId);
      if (previous) {
        for (const deviceId of previous.sandbox.devices) previous.sandbox.detach(deviceId);
        previous.sandbox.dispose();
      }
      running.set(projectId, { deploymentId, sandbox });
      attachAll(projectId, sandbox);
    },

    /** Delivers a message to the device's script. */
    deliver(device: DeviceRef, message: Record<string, unknown>): void {
      if (!connected.get(device.projectId)?.has(device.deviceId)) throw new AppError("device_offline");
      const entry = running.get(device.projectId);
      if (!entry?.sandbox.deliver(device.deviceId, message)) throw new AppError("no_script");
    },

    /** A message from a user (REST, dashboard, MCP): 404 unless they may see the device. */
    async deliverAs(
      principal: Principal,
      device: DeviceRef,
      message: Record<string, unknown>,
    ): Promise<void> {
      await requireVisibleDevice(repos, principal, device);
      this.deliver(device, message);
    },

    /** Which deployment runs for a project right now (for tests and status). */
    runningDeployment: (projectId: string) => running.get(projectId)?.deploymentId ?? null,

    /** Waits until a starting project's scripts are up (tests). */
    settled: async (projectId: string) => {
      await starting.get(projectId);
    },

    stop(): void {
      stopped = true;
      for (const off of unsubscribe.splice(0)) off();
      for (const entry of running.values()) entry.sandbox.dispose();
      running.clear();
    },
  };
}
export type ScriptHostService = ReturnType<typeof scriptHostService>;
