// A script worker: runs the sandboxes of the projects the main thread gives it. Host calls go back
// as messages, batched: everything the entries of one turn of the event loop did (one batch of
// device messages, the timers that were due) leaves in one postMessage.
import { parentPort } from "node:worker_threads";
import { ProjectSandbox, type SandboxHost, ScriptLoadError } from "@sdk/sandbox";
import type { FromWorker, ToWorker } from "./messages.ts";

const port = parentPort!;
const sandboxes = new Map<number, ProjectSandbox>();
/** Output items per sandbox the main thread has not acknowledged yet. */
const outputInFlight = new Map<number, number>();
const commands = new Map<number, { resolve: (v: unknown) => void; reject: (e: unknown) => void }>();
let nextCommand = 1;

let outbox: FromWorker[] = [];
const post = (message: FromWorker) => {
  if (outbox.length === 0) setImmediate(flush);
  outbox.push(message);
};
function flush() {
  clearTimeout(enteredTimer);
  enteredTimer = undefined;
  // Entry counts first: a failure in this batch arrives after the call it failed in was counted.
  const batch = entered.size > 0 ? [...entered.values(), ...outbox] : outbox;
  entered.clear();
  outbox = [];
  if (batch.length > 0) port.postMessage(batch);
}

/** Output items a device's timers may make per second (and at once, after a quiet second). */
const outputPerDeviceSecond = 1000;
/** Output items one entry may make (a runaway loop); what a device message causes is otherwise never dropped. */
const outputPerEntry = 1000;
/** Commands of one device that may wait for their result at once. */
const commandsPerDevice = 64;

function hostFor(id: number, maxOutput: number, entry: () => ProjectSandbox | undefined): SandboxHost {
  const dropped = new Map<string, number>();
  /** Per device: output allowance left, refilled continuously, and when it was last refilled. */
  const allowance = new Map<string, { left: number; at: number }>();
  /** Per device: commands waiting for their result. */
  const commandsWaiting = new Map<string, number>();
  /** Output of the entry running now, and which entry that is. */
  let entryOutput = 0;
  let entrySeq = -1;
  const withinRate = (deviceId: string): boolean => {
    const now = performance.now();
    let a = allowance.get(deviceId);
    if (!a) {
      a = { left: outputPerDeviceSecond, at: now };
      allowance.set(deviceId, a);
    }
    a.left = Math.min(outputPerDeviceSecond, a.left + ((now - a.at) * outputPerDeviceSecond) / 1000);
    a.at = now;
    if (a.left < 1) return false;
    a.left--;
    return true;
  };
  const overEntryCap = (seq: number): boolean => {
    if (seq !== entrySeq) {
      entrySeq = seq;
      entryOutput = 0;
    }
    return ++entryOutput > outputPerEntry;
  };
  /**
   * Counts an output item, or drops it: any entry's output past `outputPerEntry`, and a timer's
   * output when the device's timers made more than their share this second or `maxOutput` of the
   * sandbox's already wait for the main thread. Output a device message caused is never dropped:
   * the main thread pushes back on the device's socket instead.
   */
  const admit = (deviceId: string): boolean => {
    const n = outputInFlight.get(id) ?? 0;
    const sandbox = entry();
    const timer = sandbox?.currentEntry === "fire";
    if (overEntryCap(sandbox?.entriesRun ?? 0) || (timer && (n >= maxOutput || !withinRate(deviceId)))) {
      if (!dropped.size) setTimeout(() => reportDropped(), 1000).unref();
      dropped.set(deviceId, (dropped.get(deviceId) ?? 0) + 1);
      return false;
    }
    outputInFlight.set(id, n + 1);
    return true;
  };
  const reportDropped = () => {
    for (const [deviceId, n] of dropped) post({ t: "dropped", id, deviceId, n });
    dropped.clear();
  };
  return {
    command: (deviceId, type, args) => {
      const waiting = commandsWaiting.get(deviceId) ?? 0;
      if (waiting >= commandsPerDevice)
        return Promise.reject({
          code: "too_many_commands",
          message: `${commandsPerDevice} commands to this device are already waiting for their result; await some before sending more`,
        });
      commandsWaiting.set(deviceId, waiting + 1);
      const settled = () => {
        const left = (commandsWaiting.get(deviceId) ?? 1) - 1;
        if (left > 0) commandsWaiting.set(deviceId, left);
        else commandsWaiting.delete(deviceId);
      };
      return new Promise((resolve, reject) => {
        const cmd = nextCommand++;
        commands.set(cmd, {
          resolve: (v) => {
            settled();
            resolve(v);
          },
          reject: (e) => {
            settled();
            reject(e);
          },
        });
        post({ t: "command", id, cmd, deviceId, type, args });
      });
    },
    emitState: (deviceId, entityId, value) => {
      if (admit(deviceId)) post({ t: "emit", id, deviceId, entityId, value });
    },
    send: (deviceId, message) => {
      if (admit(deviceId)) post({ t: "send", id, deviceId, message });
    },
    log: (deviceId, level, message) => {
      if (admit(deviceId)) post({ t: "log", id, deviceId, level, message });
    },
    failed: (deviceId, kind, name) => post({ t: "failed", id, deviceId, kind, entry: name }),
    entered: (_deviceId, name) => countEntry(id, name),
  };
}

/**
 * Entries per sandbox not told yet: one `entered` item per sandbox leaves with the next batch, or
 * after `enteredFlushMs` when nothing else is posted (a timer that makes no output is not worth a
 * message of its own each time it fires).
 */
const entered = new Map<number, Extract<FromWorker, { t: "entered" }>>();
const enteredFlushMs = 200;
let enteredTimer: ReturnType<typeof setTimeout> | undefined;
function countEntry(id: number, name: string) {
  if (name !== "create" && name !== "message" && name !== "fire" && name !== "settle") return;
  let e = entered.get(id);
  if (!e) {
    e = { t: "entered", id, calls: 0, connects: 0 };
    entered.set(id, e);
  }
  if (outbox.length === 0 && enteredTimer === undefined) {
    enteredTimer = setTimeout(flush, enteredFlushMs);
    enteredTimer.unref();
  }
  e.calls++;
  if (name === "create") e.connects++;
}

async function load(op: Extract<ToWorker, { t: "load" }>) {
  const { id } = op;
  let loaded: ProjectSandbox | undefined;
  try {
    const sandbox = await ProjectSandbox.load({
      projectId: op.projectId,
      bundle: op.bundle,
      sourceMap: op.sourceMap,
      env: op.env,
      host: hostFor(id, op.maxOutput, () => loaded),
      limits: op.limits,
      docsBaseUrl: op.docsBaseUrl,
      onFault: (reason) => {
        sandboxes.delete(id);
        faults.set(id, reason);
        post({ t: "fault", id, reason });
      },
      onThrottle: () => post({ t: "throttled", id }),
      onDelivered: (n) => post({ t: "delivered", id, n }),
    });
    loaded = sandbox;
    sandboxes.set(id, sandbox);
    post({ t: "loaded", id });
  } catch (error) {
    const load = error instanceof ScriptLoadError;
    post({ t: "loaded", id, error: { load, message: load ? error.message : String(error) } });
  }
}

/** Operations on one sandbox run in order, after its load finished. */
const loading = new Map<number, Promise<void>>();

function handle(op: ToWorker) {
  switch (op.t) {
    case "load":
      after(op.id, () => load(op));
      return;
    case "result": {
      const pending = commands.get(op.cmd);
      commands.delete(op.cmd);
      if (op.ok) pending?.resolve(op.value);
      else pending?.reject(op.value);
      return;
    }
    case "ack":
      if (outputInFlight.has(op.id))
        outputInFlight.set(op.id, Math.max(0, outputInFlight.get(op.id)! - op.n));
      return;
  }
  if (loading.has(op.id)) after(op.id, () => apply(op));
  else apply(op);
}

function after(id: number, fn: () => Promise<void> | void) {
  const next = (loading.get(id) ?? Promise.resolve()).then(fn);
  loading.set(id, next);
  void next.finally(() => {
    if (loading.get(id) === next) loading.delete(id);
  });
}

function apply(op: Exclude<ToWorker, { t: "load" | "result" | "ack" }>) {
  const sandbox = sandboxes.get(op.id);
  switch (op.t) {
    case "attach":
      sandbox?.attach(op.deviceId, op.board);
      return;
    case "detach":
      sandbox?.detach(op.deviceId);
      post({ t: "detached", id: op.id, deviceId: op.deviceId });
      return;
    case "deliver":
      if (!sandbox?.deliver(op.deviceId, op.message)) post({ t: "delivered", id: op.id, n: 1 });
      return;
    case "env":
      sandbox?.setEnv(op.env);
      return;
    case "dispose": {
      const lost = sandbox?.waitingMessages ?? 0;
      sandbox?.dispose();
      sandboxes.delete(op.id);
      outputInFlight.delete(op.id);
      faults.delete(op.id);
      post({ t: "disposed", id: op.id, lost });
      return;
    }
    case "sync":
      post({
        t: "synced",
        id: op.id,
        req: op.req,
        fault: sandbox ? sandbox.fault : (faults.get(op.id) ?? null),
      });
      return;
  }
}

/** Why a sandbox stopped itself, kept for a `sync` that comes after. */
const faults = new Map<number, string>();

port.on("message", (batch: ToWorker[]) => {
  for (const op of batch) {
    try {
      handle(op);
    } catch (error) {
      // A host-side bug in one sandbox must not take the worker's other projects down.
      console.error(error);
    }
  }
});
