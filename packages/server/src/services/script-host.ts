import type { Board, LogLevel } from "@sdk/protocol";
import { ScriptLoadError } from "@sdk/sandbox";
import { AppError } from "../errors.ts";
import type { EventBus, Unsubscribe } from "../events/bus.ts";
import type { CommandRouter } from "../link/command-router.ts";
import type { Repositories } from "../repositories/index.ts";
import { LogCollapser } from "../scripts/log-collapser.ts";
import { type RemoteHost, type RemoteSandbox, scriptPool } from "../scripts/pool.ts";
import type { Principal } from "./auth.ts";
import type { DeviceLinkService } from "./device-link.ts";
import { type DeviceLogsService, type DeviceRef, requireVisibleDevice } from "./device-logs.ts";
import type { DeviceStateService } from "./device-state.ts";
import type { EnvVarsService } from "./env-vars.ts";
import {
  anyStable,
  attachConnected,
  attachStable,
  type CanaryState,
  canaryOperations,
  countDisconnect,
  isMember,
  roomIn,
  sandboxesOf,
  sandboxOf,
} from "./script-canary.ts";
import {
  countCalls,
  countFailure,
  countsAsScriptError,
  type HealthCounts,
  type RolloutHooks,
  sideOf,
} from "./script-health.ts";

/**
 * What the host keeps per project (`running`, and a `canary` with the `health` a rollout watches:
 * CanaryState). Starts, restarts and activations of a project run one at a time.
 */
interface ProjectScripts extends CanaryState {
  restarts: number[];
  queue: Promise<unknown>;
  /** When the project was last told it is throttled. */
  throttleToldAt?: number;
  /** Output items the worker dropped since the project's log last said so. */
  dropped?: { count: number; timer: NodeJS.Timeout };
  /** Starts and activations under way: device messages are held for the sandbox they make live. */
  holding: number;
  /** Device messages held meanwhile (at most `heldMax`; more are counted as lost). */
  held?: {
    messages: { deviceId: string; message: Record<string, unknown> }[];
    lost: number;
    waiters: (() => void)[];
  };
}

const restartWindowMs = 5 * 60_000;
const maxRestarts = 3;
/**
 * Output items (emitState, log, send, commands) of one project that may wait to be stored or
 * answered: above it device sockets wait, and a timer's output is dropped.
 */
const maxOutputInFlight = 256;
/** Device messages queued into a project's worker at which device sockets wait, and where they go on. */
const queueHighWater = 500;
const queueLowWater = 250;
/** Device messages held per project while its scripts (re)start; device sockets wait at this many. */
const heldMax = 500;
/** A throttled project is told again after this long. */
const throttleRetellMs = 60_000;

/**
 * Runs each project's live deployment for its connected devices: a sandbox per project with
 * connected devices, one script instance per device. Swaps versions without touching device
 * connections, passes env var changes in, and restarts a project whose scripts stopped themselves
 * (memory cap, stack overflow), always from the live deployment: the database's `active` row,
 * which an activation commits before its sandbox may be restarted.
 */
export function scriptHostService(deps: {
  repos: Pick<Repositories, "deployments" | "devices">;
  bus: EventBus;
  /** Messages for a device's script go to the instance serving the device. */
  router: CommandRouter;
  link: DeviceLinkService;
  logs: DeviceLogsService;
  state: DeviceStateService;
  env: EnvVarsService;
  limits: {
    timeoutMs: number;
    loadTimeoutMs: number;
    memoryLimitMb: number;
    workers: number;
    cpuBudgetMs: number;
  };
  /** The server's base URL, for absolute `SdkError.docs` in scripts (read when a sandbox loads). */
  docsBaseUrl: () => string;
  onError: (error: unknown) => void;
}) {
  const { repos, bus, router, link, logs, state, env, limits, onError } = deps;
  const published = link.publishScriptMessage;
  const projects = new Map<string, ProjectScripts>();
  /** Connected devices per project, whether or not a script runs for them. */
  const connected = new Map<string, Map<string, Board>>();
  let stopped = false;
  let unsubscribe: Unsubscribe[] = [];
  const pool = scriptPool({ workers: limits.workers, maxOutputInFlight, queueHighWater, queueLowWater });
  const repeats = new LogCollapser({ windowMs: 10_000, keep: 3 });
  let hooks: RolloutHooks | undefined;

  /** Writes a script log line; a line repeated more than 3 times in 10 s is counted instead (said once at the end). */
  const writeLog = (device: DeviceRef, level: LogLevel, message: string): Promise<unknown> | undefined => {
    const key = `${device.projectId}\0${device.deviceId}\0${level}\0${message}`;
    if (
      !repeats.admit(
        key,
        (suffix) => void logs.append(device, level, "script", message + suffix).catch(onError),
        device.projectId,
      )
    )
      return undefined;
    return logs.append(device, level, "script", message).catch((error: unknown) => {
      if (!(error instanceof AppError)) onError(error);
    });
  };
  const log = (device: DeviceRef, level: LogLevel, message: string) => {
    void writeLog(device, level, message);
  };
  const logAll = (projectId: string, message: string) => {
    for (const deviceId of connected.get(projectId)?.keys() ?? [])
      log({ projectId, deviceId }, "error", message);
  };

  const scriptsOf = (projectId: string): ProjectScripts => {
    let p = projects.get(projectId);
    if (!p) {
      p = { restarts: [], queue: Promise.resolve(), holding: 0 };
      projects.set(projectId, p);
    }
    return p;
  };

  /** Runs `fn` after every earlier start, restart and activation of the project has finished. */
  function serial<T>(projectId: string, fn: (p: ProjectScripts) => Promise<T> | T): Promise<T> {
    const p = scriptsOf(projectId);
    const result = p.queue.then(() => fn(p));
    p.queue = result.catch(() => {});
    return result;
  }

  const hold = (p: ProjectScripts, deviceId: string, message: Record<string, unknown>) => {
    p.held ??= { messages: [], lost: 0, waiters: [] };
    if (p.held.messages.length >= heldMax) p.held.lost++;
    else p.held.messages.push({ deviceId, message });
  };

  /** Once no start or activation is under way: what was held goes to the running sandbox, or is counted lost. */
  function release(projectId: string, p: ProjectScripts) {
    if (p.holding > 0 || !p.held) return;
    const held = p.held;
    p.held = undefined;
    let lost = held.lost;
    for (const { deviceId, message } of held.messages)
      if (!sandboxOf(p, deviceId)?.deliver(deviceId, message)) lost++;
    for (const resolve of held.waiters) resolve();
    // No script runs afterwards (none deployed, or stopped, which its log says): like any message then, not told.
    if (lost > 0 && !stopped && p.running)
      logAll(
        projectId,
        `${lost} device message${lost === 1 ? " was" : "s were"} lost while the scripts started or restarted`,
      );
  }

  /** Runs `fn` in `serial`, holding the project's device messages from now until it is done. */
  function holdingWhile(projectId: string, fn: (p: ProjectScripts) => Promise<void>): Promise<void> {
    const p = scriptsOf(projectId);
    p.holding++;
    return serial(projectId, fn).finally(() => {
      p.holding--;
      release(projectId, p);
    });
  }

  /** Counts into a deployment's side while a rollout watches it; `changed`: thresholds may be crossed. */
  const count = (projectId: string, deploymentId: string, add: (h: HealthCounts) => void, changed = true) => {
    const side = sideOf(projects.get(projectId)?.health, deploymentId);
    if (!side) return;
    add(side);
    if (changed) hooks?.changed(projectId);
  };

  const hostFor = (
    projectId: string,
    deploymentId: string,
    sandbox: () => RemoteSandbox | undefined,
  ): RemoteHost => ({
    command: (deviceId, type, args) => {
      count(projectId, deploymentId, (h) => h.commands++, false);
      return link.command({ projectId, deviceId }, type, args, "script").catch((error: unknown) => {
        count(projectId, deploymentId, (h) => h.commandErrors++);
        throw error instanceof AppError
          ? { code: error.code, message: error.message }
          : { code: "device_error", message: String(error) };
      });
    },
    emitState: (deviceId, entityId, value) =>
      state.record({ projectId, deviceId }, entityId, value).catch((error: unknown) => {
        if (error instanceof AppError) log({ projectId, deviceId }, "error", `emitState: ${error.message}`);
        else onError(error);
      }),
    send: (deviceId, message) => {
      link.sendRaw({ projectId, deviceId }, message).catch((error: unknown) => {
        log({ projectId, deviceId }, "error", `send: ${(error as Error).message}`);
      });
    },
    log: (deviceId, level, message) => writeLog({ projectId, deviceId }, level, message),
    failed: (deviceId, kind, entry) => {
      // An entry that ran to its deadline held up its worker that long: the next load is isolated.
      if (kind === "timeout") pool.markOverBudget(projectId);
      if (countsAsScriptError(entry))
        void bus.publish("script.failed", { projectId, deviceId, at: Date.now(), kind });
      count(projectId, deploymentId, (h) => countFailure(h, kind, entry));
    },
    entered: (calls, connects) => count(projectId, deploymentId, countCalls(calls, connects), false),
    dropped: (_deviceId, n) => droppedOutput(projectId, n),
    lost: (n) =>
      logAll(
        projectId,
        `${n} device message${n === 1 ? " was" : "s were"} lost: the scripts were replaced or stopped while they waited for their CPU budget`,
      ),
    throttled: () => {
      const s = sandbox();
      if (s) throttled(projectId, s);
    },
    fault: (reason, kind) => {
      const s = sandbox();
      if (s) faulted(projectId, s, reason, kind);
    },
  });

  /** Counts dropped output, and says so in the devices' logs at most every 10 s. */
  function droppedOutput(projectId: string, n: number) {
    const p = scriptsOf(projectId);
    if (p.dropped) {
      p.dropped.count += n;
      return;
    }
    const timer = setTimeout(() => {
      const count = p.dropped?.count ?? 0;
      p.dropped = undefined;
      logAll(
        projectId,
        `${count} emitState/log/send call${count === 1 ? " was" : "s were"} dropped in the last 10 s: over 1000 from one handler call, or from timers over 1000 a second for one device or while ${maxOutputInFlight} of the project's wait to be stored`,
      );
    }, 10_000).unref();
    p.dropped = { count: n, timer };
  }

  /**
   * The project ran over its CPU budget. Its entries wait in the worker for the next second; its
   * devices' logs say so (once a minute at most); and it moves to the worker of its own, so that it
   * never shares one with projects within their budget.
   */
  function throttled(projectId: string, sandbox: RemoteSandbox) {
    const p = projects.get(projectId);
    if (!p || p.running?.sandbox !== sandbox || stopped) return;
    pool.markOverBudget(projectId);
    const now = Date.now();
    const move = !sandbox.isolated;
    if (move || p.throttleToldAt === undefined || now - p.throttleToldAt > throttleRetellMs) {
      p.throttleToldAt = now;
      logAll(
        projectId,
        `scripts throttled: they used their CPU budget of ${limits.cpuBudgetMs} ms per second (SCRIPT_CPU_BUDGET_MS), so their timers, messages and command results wait for the next second${move ? "; they restart in a worker thread of their own" : ""}`,
      );
    }
    if (!move) return;
    holdingWhile(projectId, async (q) => {
      if (q.running?.sandbox !== sandbox) return;
      q.running = undefined;
      sandbox.dispose();
      await start(projectId, q);
    }).catch(onError);
  }

  /** Loads a deployment into a fresh sandbox. Throws ScriptLoadError when the bundle does not load. */
  async function load(projectId: string, deploymentId: string): Promise<RemoteSandbox> {
    const stored = await repos.deployments.bundle(deploymentId);
    if (!stored) throw new Error(`deployment ${deploymentId} has no bundle stored`);
    const { bundle, sourceMap } = stored;
    let loaded: RemoteSandbox | undefined;
    loaded = await pool.load(
      {
        projectId,
        bundle,
        sourceMap,
        env: await env.forScripts(projectId),
        limits: {
          timeoutMs: limits.timeoutMs,
          loadTimeoutMs: limits.loadTimeoutMs,
          memoryBytes: limits.memoryLimitMb * 1024 * 1024,
          cpuBudgetMs: limits.cpuBudgetMs,
        },
        docsBaseUrl: deps.docsBaseUrl(),
      },
      hostFor(projectId, deploymentId, () => loaded),
    );
    return loaded;
  }

  const attachAll = (projectId: string, sandbox: RemoteSandbox) =>
    attachStable(projects.get(projectId), connected.get(projectId), sandbox);
  const stableConnected = (projectId: string, p: ProjectScripts) => anyStable(p, connected.get(projectId));

  /** Starts the live deployment for the connected devices (inside `serial`). */
  async function start(projectId: string, p: ProjectScripts): Promise<void> {
    if (p.running || stopped || !stableConnected(projectId, p)) return;
    const deployment = await repos.deployments.active(projectId);
    if (!deployment || stopped || !stableConnected(projectId, p)) return;
    let sandbox: RemoteSandbox;
    try {
      sandbox = await load(projectId, deployment.id);
    } catch (error) {
      if (stopped) return;
      const message = error instanceof ScriptLoadError ? error.message : String(error);
      logAll(projectId, `the deployed script could not start: ${message}`);
      if (!(error instanceof ScriptLoadError)) onError(error);
      return;
    }
    if (stopped || !stableConnected(projectId, p)) return sandbox.dispose();
    p.running = { deploymentId: deployment.id, sandbox };
    attachAll(projectId, sandbox);
  }

  /**
   * Another instance made a deployment live (its trial and first-minute watch ran there): the
   * scripts running here move to the live deployment read from the database, and where none runs
   * (its first deployment, or scripts that stopped) the connected boards start it (inside
   * `holdingWhile`). A canary running here is left to its rollout.
   */
  async function reload(projectId: string, p: ProjectScripts): Promise<void> {
    const previous = p.running;
    if (stopped) return;
    if (!previous) {
      p.restarts = [];
      return start(projectId, p);
    }
    const active = await repos.deployments.active(projectId);
    if (!active || active.id === previous.deploymentId || stopped || p.running !== previous) return;
    p.running = undefined;
    if (!previous.sandbox.disposed) {
      // The old instances' onDeviceDisconnect runs before the new ones' onDeviceConnect.
      for (const deviceId of previous.sandbox.devices) previous.sandbox.detach(deviceId);
      await previous.sandbox.sync();
      previous.sandbox.dispose();
    }
    p.restarts = [];
    await start(projectId, p);
  }

  /**
   * A sandbox stopped itself, or its worker thread ended (`crash`: every project on that worker
   * restarts, none is isolated or has the restart counted against it). Only the running one
   * matters: a replaced or trial sandbox is never restarted.
   */
  function faulted(projectId: string, sandbox: RemoteSandbox, reason: string, kind: "script" | "crash") {
    const p = projects.get(projectId);
    if (canaries.canaryFaulted(projectId, sandbox, reason, kind)) return;
    if (!p || p.running?.sandbox !== sandbox) return;
    p.running = undefined;
    if (kind === "script") pool.markOverBudget(projectId);
    if (stopped || !connected.get(projectId)?.size) return;
    if (kind === "crash") {
      logAll(projectId, `the scripts restart: ${reason} (their instances' state is lost)`);
      holdingWhile(projectId, (q) => start(projectId, q)).catch(onError);
      return;
    }
    const now = Date.now();
    p.restarts = p.restarts.filter((t) => t > now - restartWindowMs);
    p.restarts.push(now);
    if (p.restarts.length > maxRestarts) {
      logAll(
        projectId,
        `scripts stopped: they failed ${p.restarts.length} times within 5 minutes (${reason.split("\n")[0]}); deploy again to restart them`,
      );
      return;
    }
    holdingWhile(projectId, (q) => start(projectId, q)).catch(onError);
  }

  const canaries = canaryOperations({
    project: scriptsOf,
    existing: (projectId) => projects.get(projectId),
    connected: (projectId) => connected.get(projectId),
    activeId: async (projectId) => (await repos.deployments.active(projectId))?.id ?? null,
    hooks: () => hooks,
    onError,
    load,
    holdingWhile: (projectId, fn) => holdingWhile(projectId, () => fn()),
    attachAll,
    start: (projectId) => start(projectId, scriptsOf(projectId)),
    log: (projectId, deviceId, message) => log({ projectId, deviceId }, "warn", message),
    logAll,
    stopped: () => stopped,
  });

  function connect(device: DeviceRef, board: Board) {
    let devices = connected.get(device.projectId);
    if (!devices) {
      devices = new Map();
      connected.set(device.projectId, devices);
    }
    devices.set(device.deviceId, board);
    const attach = async (p: ProjectScripts) => {
      if (!attachConnected(p, device.deviceId, board, devices)) await start(device.projectId, p);
    };
    const p = scriptsOf(device.projectId);
    // A start to come: the device's first messages wait for it.
    (p.running || isMember(p, device.deviceId)
      ? serial(device.projectId, attach)
      : holdingWhile(device.projectId, attach)
    ).catch(onError);
  }

  function disconnect(device: DeviceRef) {
    const devices = connected.get(device.projectId);
    devices?.delete(device.deviceId);
    const p = projects.get(device.projectId);
    const entry = p?.running;
    entry?.sandbox.detach(device.deviceId);
    p?.canary?.sandbox.detach(device.deviceId);
    if (countDisconnect(p, device.deviceId)) hooks?.changed(device.projectId);
    if (devices && devices.size === 0) {
      connected.delete(device.projectId);
      // No device left: free the project's memory until one connects again.
      if (entry && p) {
        entry.sandbox.dispose();
        p.running = undefined;
      }
    }
  }

  return {
    name: "script host",
    ...canaries,

    /** The rollouts service hears health changes and canary faults through these. */
    setRolloutHooks(next: RolloutHooks): void {
      hooks = next;
    },

    start(): void {
      stopped = false;
      pool.resume();
      unsubscribe = [
        bus.subscribe("device.connected", (device) => connect(device, device.board)),
        bus.subscribe("device.disconnected", disconnect),
        // Another instance serves the device now: its script instance here ends (no event says so).
        link.onReleased((connection) => disconnect(connection)),
        bus.subscribe("device.message", ({ projectId, deviceId, message }) => {
          const p = projects.get(projectId);
          if (p?.holding) hold(p, deviceId, message);
          else sandboxOf(p, deviceId)?.deliver(deviceId, message);
        }),
        // Returned, so the request that changed a variable answers once running scripts see it.
        // A deleted project's devices are gone too: drop what is kept for it, once its queue is done.
        bus.subscribe(
          "project.deleted",
          ({ projectId }) => {
            serial(projectId, (p) => {
              for (const sandbox of sandboxesOf(p)) sandbox.dispose();
              p.running = undefined;
              p.canary = undefined;
              if (projects.get(projectId) === p) projects.delete(projectId);
              connected.delete(projectId);
            }).catch(onError);
          },
          { everywhere: true },
        ),
        bus.subscribe(
          "env.changed",
          async ({ projectId }) => {
            const sandboxes = sandboxesOf(projects.get(projectId));
            if (sandboxes.length === 0) return;
            const values = await env.forScripts(projectId);
            for (const sandbox of sandboxes) sandbox.setEnv(values);
            await Promise.all(sandboxes.map((sandbox) => sandbox.sync()));
          },
          { everywhere: true },
        ),
        // Made live on another instance: the scripts running here move to it, and boards connected
        // here with none running (the project's first deployment) start it. The activation here
        // already runs it (the same id): nothing to do, no database read.
        bus.subscribe(
          "deployment.activated",
          ({ projectId, deploymentId }) => {
            const running = projects.get(projectId)?.running;
            if (stopped || running?.deploymentId === deploymentId) return;
            if (!running && !connected.get(projectId)?.size) return;
            holdingWhile(projectId, (p) => reload(projectId, p)).catch(onError);
          },
          { everywhere: true },
        ),
      ];
    },

    /**
     * This instance of a cluster may have missed `env.changed` or `deployment.activated` (NATS was
     * unreachable): each project whose scripts run here gets its environment again and moves to its
     * live deployment if that changed, as those events do.
     */
    async resync(): Promise<void> {
      await Promise.all(
        [...projects.keys()].map(async (projectId) => {
          const sandboxes = sandboxesOf(projects.get(projectId));
          if (sandboxes.length === 0 || stopped) return;
          const values = await env.forScripts(projectId);
          for (const sandbox of sandboxes) sandbox.setEnv(values);
          await holdingWhile(projectId, (p) => reload(projectId, p));
        }),
      );
    },

    /**
     * Delivers a message to the device's script (REST, dashboard, MCP, tags, Home Assistant), on
     * the instance serving the device (`deliverHere` there). It does not wait for room: a project at
     * its back-pressure bound answers 429 `scripts_busy` at once.
     */
    async deliver(device: DeviceRef, message: Record<string, unknown>): Promise<void> {
      await router.send(device, { kind: "message", message });
    },

    /** `deliver` on the instance serving the device (the command router's `message`). */
    deliverHere(device: DeviceRef, message: Record<string, unknown>): void {
      if (!connected.get(device.projectId)?.has(device.deviceId)) throw new AppError("device_offline");
      const p = projects.get(device.projectId);
      if ((p?.held?.messages.length ?? 0) >= heldMax || sandboxOf(p, device.deviceId)?.full)
        throw new AppError("scripts_busy");
      if (p?.holding) {
        hold(p, device.deviceId, message);
        published(device, message);
        return;
      }
      if (!sandboxOf(p, device.deviceId)?.deliver(device.deviceId, message)) throw new AppError("no_script");
      published(device, message);
    },

    /** A message from a user (REST, dashboard, MCP): 404 unless they may see the device. */
    async deliverAs(
      principal: Principal,
      device: DeviceRef,
      message: Record<string, unknown>,
    ): Promise<void> {
      await requireVisibleDevice(repos, principal, device);
      await this.deliver(device, message);
    },

    /**
     * Back-pressure for device messages: null when the project's scripts can take another message
     * now, else a promise that resolves once they can.
     */
    waitForRoom: (projectId: string): Promise<void> | null => {
      const p = projects.get(projectId);
      const held = p?.held;
      if (held && held.messages.length >= heldMax)
        return new Promise((resolve) => held.waiters.push(resolve));
      return roomIn(sandboxesOf(p));
    },

    /** Ends the worker thread running the project's scripts, as a crash would (tests). */
    crashWorkerForTests: (projectId: string): void => {
      projects.get(projectId)?.running?.sandbox.worker.crash();
    },

    /** Which deployment runs for a project right now (for tests and status). */
    runningDeployment: (projectId: string) => projects.get(projectId)?.running?.deploymentId ?? null,

    /** Waits until the project's starts, restarts and activations queued so far are done (tests). */
    settled: async (projectId: string) => {
      await projects.get(projectId)?.queue;
    },

    stop(): void {
      stopped = true;
      for (const off of unsubscribe.splice(0)) off();
      for (const p of projects.values()) {
        for (const sandbox of sandboxesOf(p)) sandbox.dispose();
        if (p.dropped) clearTimeout(p.dropped.timer);
        for (const resolve of p.held?.waiters ?? []) resolve();
      }
      projects.clear();
      repeats.clear();
      pool.stop();
    },
  };
}
export type ScriptHostService = ReturnType<typeof scriptHostService>;
