/**
 * The load generator, a process of its own (driven by run.ts over IPC) so that its CPU is measured
 * apart from the server's. It holds one lean `ws` client per device (Basic auth, hello, welcome) and
 * one watch socket for each of the first `watch` devices, sends `tick` messages at a fixed offered
 * rate spread over the devices in turn, and times each from its send to the `state` event with the
 * same seq on the device's watch socket.
 */
import { protocolVersion } from "@sdk/protocol/hardware";
import WebSocket from "ws";
import { latency } from "../lib/measure.ts";
import type { Credentials } from "../lib/provision.ts";
import type { FromLoad, LoadStep, ToLoad } from "./messages.ts";

interface Device {
  deviceId: string;
  socket: WebSocket;
  watched: boolean;
}

/** Messages in flight whose state events are awaited: message k has seq `base + k`. */
interface Tracking {
  base: number;
  sentAt: Float64Array;
  got: Uint8Array;
  /** Message k's latency, once `got[k]`. */
  latencies: Float64Array;
  received: number;
  /** How many of those sent so far go to watched devices. */
  measured: number;
  lastReceiveAt: number;
  /** Called when `received` reaches `measured` once sending is over. */
  onAll: (() => void) | undefined;
  sendingDone: boolean;
}

const hello = JSON.stringify({
  type: "hello",
  protocol: protocolVersion,
  firmware: "bench",
  board: "pico_w",
  maxFrame: 16384,
});
const handshakeTimeoutMs = 30_000;
/** `latencySteady` leaves out the messages of a step's first second. */
const steadyAfterSeconds = 1;

let devices: Device[] = [];
let watchSockets: WebSocket[] = [];
let tracking: Tracking | undefined;
let nextSeq = 1;
const counters = { serverErrors: 0, closed: 0, watchersClosed: 0, lagged: 0 };

function reply(message: FromLoad): void {
  process.send?.(message);
}

function track(count: number): Tracking {
  const t: Tracking = {
    base: nextSeq,
    sentAt: new Float64Array(count),
    got: new Uint8Array(count),
    latencies: new Float64Array(count),
    received: 0,
    measured: 0,
    lastReceiveAt: 0,
    onAll: undefined,
    sendingDone: false,
  };
  nextSeq += count;
  tracking = t;
  return t;
}

function onState(value: unknown): void {
  const now = performance.now();
  const t = tracking;
  if (!t || typeof value !== "number") return;
  const k = value - t.base;
  if (k < 0 || k >= t.got.length || t.got[k] === 1) return; // another step's, or a repeat
  t.got[k] = 1;
  t.latencies[k] = now - t.sentAt[k]!;
  t.received++;
  t.lastReceiveAt = now;
  if (t.sendingDone && t.received >= t.measured) t.onAll?.();
}

/** The latencies of the messages k ≥ `from` that came back, sorted. */
function receivedLatencies(t: Tracking, from: number): Float64Array {
  const out = new Float64Array(t.received);
  let n = 0;
  for (let k = from; k < t.got.length; k++) if (t.got[k] === 1) out[n++] = t.latencies[k]!;
  return out.subarray(0, n).sort();
}

/** Sends message k (seq base + k) from device k mod n. */
function send(t: Tracking, k: number): void {
  const device = devices[k % devices.length]!;
  const now = performance.now();
  t.sentAt[k] = now;
  if (device.watched) t.measured++;
  device.socket.send(
    `{"type":"tick","seq":${t.base + k},"t":${Math.round((performance.timeOrigin + now) * 1000) / 1000}}`,
  );
}

/** Resolves when every measured message came back, or `ms` after now. */
function drained(t: Tracking, ms: number): Promise<void> {
  t.sendingDone = true;
  if (t.received >= t.measured) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    t.onAll = () => {
      clearTimeout(timer);
      resolve();
    };
  });
}

function connectDevice(server: string, credentials: Credentials, watched: boolean): Promise<Device> {
  return new Promise((resolve, reject) => {
    const auth = Buffer.from(`${credentials.deviceId}:${credentials.secret}`).toString("base64");
    const socket = new WebSocket(`ws://${server}/v1/device`, {
      headers: { authorization: `Basic ${auth}` },
      perMessageDeflate: false,
    });
    let welcomed = false;
    const fail = (error: Error) => {
      clearTimeout(timer);
      socket.terminate();
      reject(error);
    };
    const timer = setTimeout(
      () => fail(new Error(`${credentials.deviceId}: no welcome`)),
      handshakeTimeoutMs,
    );
    socket.once("open", () => socket.send(hello));
    socket.on("message", (data) => {
      const text = data.toString();
      if (welcomed) {
        if (text.includes('"type":"error"')) counters.serverErrors++;
        return;
      }
      const message = JSON.parse(text) as { type?: string };
      if (message.type !== "welcome")
        return fail(new Error(`${credentials.deviceId}: ${text.slice(0, 200)}`));
      welcomed = true;
      clearTimeout(timer);
      resolve({ deviceId: credentials.deviceId, socket, watched });
    });
    socket.on("error", (error) => {
      if (!welcomed) fail(error);
    });
    socket.on("close", () => {
      if (welcomed) counters.closed++;
      else fail(new Error(`${credentials.deviceId}: closed before welcome`));
    });
  });
}

function connectWatcher(
  server: string,
  projectId: string,
  deviceId: string,
  token: string,
): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(`ws://${server}/v1/projects/${projectId}/devices/${deviceId}/watch`, {
      headers: { authorization: `Bearer ${token}` },
      perMessageDeflate: false,
    });
    let ready = false;
    const timer = setTimeout(() => {
      socket.terminate();
      reject(new Error(`watch ${deviceId}: no snapshot`));
    }, handshakeTimeoutMs);
    socket.on("message", (data) => {
      const event = JSON.parse(data.toString()) as {
        type?: string;
        entityId?: string;
        value?: unknown;
        dropped?: number;
      };
      if (event.type === "state" && event.entityId === "v") onState(event.value);
      else if (event.type === "lagged") counters.lagged += event.dropped ?? 0;
      else if (event.type === "snapshot" && !ready) {
        ready = true;
        clearTimeout(timer);
        resolve(socket);
      }
    });
    socket.on("error", (error) => {
      if (ready) return;
      clearTimeout(timer);
      reject(error);
    });
    socket.on("close", () => {
      if (ready) counters.watchersClosed++;
    });
  });
}

/** Runs `work` over `items` with at most `limit` in flight, in order of the items. */
async function pool<T, R>(
  items: readonly T[],
  limit: number,
  work: (item: T, i: number) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await work(items[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

async function connect(message: Extract<ToLoad, { type: "connect" }>): Promise<void> {
  const watch = Math.min(message.watch, message.devices.length);
  let started = performance.now();
  devices = await pool(message.devices, message.concurrency, (c, i) =>
    connectDevice(message.server, c, i < watch),
  );
  const devicesMs = performance.now() - started;
  started = performance.now();
  watchSockets = await pool(devices.slice(0, watch), message.concurrency, (d) =>
    connectWatcher(message.watchServer, message.projectId, d.deviceId, message.token),
  );
  reply({
    type: "connected",
    devicesMs: Math.round(devicesMs),
    watchersMs: Math.round(performance.now() - started),
    watched: watch,
  });
}

async function warmUp(timeoutMs: number): Promise<void> {
  const started = performance.now();
  const t = track(devices.length);
  for (let k = 0; k < devices.length; k++) send(t, k);
  await drained(t, timeoutMs);
  reply({ type: "warmedUp", ms: Math.round(performance.now() - started), missing: t.measured - t.received });
}

async function step(rate: number, seconds: number, drainMs: number): Promise<void> {
  const total = Math.round(rate * seconds);
  const t = track(total);
  const sendLag = new Float64Array(total);
  const before = { ...counters };
  const interval = 1000 / rate;
  const started = performance.now();
  let k = 0;
  await new Promise<void>((resolve) => {
    const tick = () => {
      const due = Math.min(total, Math.floor((performance.now() - started) / interval) + 1);
      for (; k < due; k++) {
        send(t, k);
        sendLag[k] = t.sentAt[k]! - (started + k * interval);
      }
      if (k < total) setTimeout(tick, 1);
      else resolve();
    };
    tick();
  });
  const lastSendAt = performance.now();
  await drained(t, drainMs);
  const spanMs = (t.received > 0 ? t.lastReceiveAt : performance.now()) - started;
  const result: LoadStep = {
    type: "stepDone",
    offeredPerSecond: rate,
    seconds,
    firstSeq: t.base,
    sent: total,
    sendMs: Math.round(lastSendAt - started),
    measured: t.measured,
    received: t.received,
    lagged: counters.lagged - before.lagged,
    spanMs: Math.round(spanMs),
    achievedPerSecond: Math.round((t.received / spanMs) * 1000),
    latency: latency(receivedLatencies(t, 0), 2),
    latencySteady: latency(receivedLatencies(t, Math.round(rate * steadyAfterSeconds)), 2),
    sendLag: latency(sendLag.sort(), 2),
    serverErrors: counters.serverErrors - before.serverErrors,
    closed: counters.closed - before.closed,
    watchersClosed: counters.watchersClosed - before.watchersClosed,
  };
  tracking = undefined;
  reply(result);
}

async function disconnect(): Promise<void> {
  const sockets = [...watchSockets, ...devices.map((d) => d.socket)];
  devices = [];
  watchSockets = [];
  await Promise.all(
    sockets.map(
      (socket) =>
        new Promise<void>((resolve) => {
          if (socket.readyState === WebSocket.CLOSED) return resolve();
          const timer = setTimeout(() => {
            socket.terminate();
            resolve();
          }, 5_000);
          socket.once("close", () => {
            clearTimeout(timer);
            resolve();
          });
          socket.close(1000, "bench step over");
        }),
    ),
  );
  counters.closed = 0;
  counters.watchersClosed = 0;
  reply({ type: "disconnected" });
}

const fail = (error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
};

process.on("message", (message: ToLoad) => {
  switch (message.type) {
    case "connect":
      connect(message).catch(fail);
      return;
    case "warmUp":
      warmUp(message.timeoutMs).catch(fail);
      return;
    case "step":
      step(message.rate, message.seconds, message.drainMs).catch(fail);
      return;
    case "disconnect":
      disconnect().catch(fail);
      return;
    case "stop":
      for (const socket of [...watchSockets, ...devices.map((d) => d.socket)]) socket.terminate();
      reply({ type: "stopped" });
      setTimeout(() => process.exit(0), 100);
      return;
  }
});

// Never outlive run.ts.
process.on("disconnect", () => process.exit(0));
reply({ type: "ready" });
