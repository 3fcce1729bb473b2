import { wallMs } from "../lib/clock.ts";
import { type Cpu, type Latency, latency, type Memory, memoryOf, Span, timeUntil } from "../lib/measure.ts";
import { sleep } from "../lib/net.ts";
import { type ListenCounters, listenCounters, listenDelta } from "../lib/proc.ts";
import { SdkTarget, type Target } from "../lib/targets.ts";
import { buildScript, counterScript } from "../scripts/project.ts";
import { Generator } from "./generator.ts";
import { type Spread, spread, waitAllOnline } from "./measure.ts";
import type { Options } from "./options.ts";

export interface TargetResult {
  target: string;
  devices: number;
  /** sdk: the script deployed before the devices connected (each device gets an instance); null: none. */
  deployment: { id: string; version: number; status: string } | null;
  memory: {
    /** Freshly booted, nothing connected. */
    before: Memory;
    /** All devices online, 5 s later. */
    online: Memory;
    /** After the reconnect storm (a new process), all online again, 5 s later. */
    afterStorm: Memory;
    rssPerDeviceBytes: number;
    heapPerDeviceBytes: number;
    rssPerDeviceAfterGcBytes: number;
    heapPerDeviceAfterGcBytes: number;
  };
  connect: Spread &
    Cpu & {
      concurrency: number;
      devicesPerSecond: number;
      /** First attempts that failed (those devices retried with backoff). */
      failedFirstAttempts: number;
      /** From each successful dial to its welcome. */
      handshake: Latency;
      /** SYNs dropped on a full accept queue (the client retransmits after 1 s, 3 s, …). */
      tcp: ListenCounters;
    };
  idle: Cpu & {
    windowSeconds: number;
    heartbeatSeconds: number;
    serverPercentPer1000: number;
    onlineAtEnd: number;
  };
  /** SIGTERM: the server closes device sockets with 1012 and a retry hint (graceful restart). */
  storm: Restart;
  /** SIGKILL: no close frame (1006); the devices' backoff is capped at 2 s for 10 s. */
  kill: Restart;
  generator: { rssBytes: number; cpuMs: number; workers: number };
}

interface Restart {
  /** the signal until the old process exited. */
  stopMs: number;
  /** the signal until the new process accepted connections. */
  downMs: number;
  /** Welcomes counted by the generator, from the new process accepting connections. */
  fromReady: Spread;
  /** the signal until every device was welcomed again. */
  fromSigtermMs: number;
  /** When the last successful attempt dialled, from ready: the part of the storm spent in backoff. */
  lastDialFromReadyMs: number;
  /** From each successful dial to its welcome: the part the server is responsible for. */
  handshake: Latency;
  tcp: ListenCounters;
  /** Dial attempts during the storm (N would be a perfect storm with no failed attempt). */
  attempts: number;
  errors: Record<string, number>;
  /** When the server's REST API counted all N online, from ready (sdk only; polled afterwards). */
  restAllOnlineFromReadyMs: number | null;
  /** From the new process accepting connections until all online. */
  cpu: Cpu;
}

const settleMs = 5_000;
const longLivedMs = 11_000;
const kib = 1024;

/** One server through every phase: before, connect, idle, storm. The caller disposes the target. */
export async function benchTarget(
  target: Target,
  options: Options,
  log: (line: string) => void,
  track: (generator: Generator) => void,
): Promise<TargetResult> {
  const n = options.devices;
  log(`[${target.name}] preparing ${n} devices`);
  const credentials = await target.prepare(n, log);
  const deployment = options.script && target instanceof SdkTarget ? await deployScript(target) : null;
  if (deployment) log(`[${target.name}] deployed the counter script (v${deployment.version})`);
  const generator = await Generator.launch(options.workers);
  track(generator);
  const connectTimeoutMs = 120_000 + n * 20;
  try {
    await sleep(2_000);
    const before = await memoryOf(target.child);
    log(`[${target.name}] before: RSS ${mib(before.rssBytes)}, heap ${mib(before.heapUsedBytes)}`);

    // ---------------------------------------------------------------- connect
    log(`[${target.name}] connecting ${n} devices (${options.concurrency} handshakes in flight)`);
    generator.mark();
    const connectSpan = await Span.begin(target.child, generator);
    const connectTcp = listenCounters();
    const started = await generator.start(target.server, credentials, options.concurrency, connectTimeoutMs);
    await waitAllOnline(generator, n, connectTimeoutMs, log);
    const connectCpu = await connectSpan.end();
    const connectTcpDelta = listenDelta(connectTcp, listenCounters());
    const connectTimeline = await generator.timeline();
    const connectSpread = spread(connectTimeline.welcomes, n, started.firstDialAt);
    const devicesPerSecond = Math.round(n / (connectSpread.allMs / 1000));
    log(`[${target.name}] all ${n} online in ${connectSpread.allMs} ms (${devicesPerSecond}/s)`);

    await sleep(settleMs);
    const online = await memoryOf(target.child);
    log(`[${target.name}] online: RSS ${mib(online.rssBytes)}, heap ${mib(online.heapUsedBytes)}`);

    // ---------------------------------------------------------------- idle
    await sleep(1_000);
    log(
      `[${target.name}] idle window ${options.idleSeconds} s (heartbeat every ${target.heartbeatSeconds} s)`,
    );
    const idleSpan = await Span.begin(target.child, generator);
    await sleep(options.idleSeconds * 1000);
    const idleCpu = await idleSpan.end();
    const onlineAtEnd = (await generator.status()).online;
    const generatorRss = generator.sample().rssBytes;
    log(
      `[${target.name}] idle: server ${idleCpu.serverPercent.toFixed(2)} % of a core, ${onlineAtEnd}/${n} still online`,
    );

    // ---------------------------------------------------------------- restarts
    const storm = await restart(target, generator, "SIGTERM", n, connectTimeoutMs, log);
    // Connections that stayed up 10 s count as long-lived: losing one caps the backoff at 2 s.
    await sleep(longLivedMs);
    const kill = await restart(target, generator, "SIGKILL", n, connectTimeoutMs, log);

    await sleep(settleMs);
    const afterStorm = await memoryOf(target.child);
    const generatorCpuMs = generator.sample().cpuMs;

    return {
      target: target.name,
      devices: n,
      deployment,
      memory: {
        before,
        online,
        afterStorm,
        rssPerDeviceBytes: perDevice(online.rssBytes - before.rssBytes, n),
        heapPerDeviceBytes: perDevice(online.heapUsedBytes - before.heapUsedBytes, n),
        rssPerDeviceAfterGcBytes: perDevice(online.rssAfterGcBytes - before.rssAfterGcBytes, n),
        heapPerDeviceAfterGcBytes: perDevice(online.heapUsedAfterGcBytes - before.heapUsedAfterGcBytes, n),
      },
      connect: {
        ...connectSpread,
        concurrency: options.concurrency,
        devicesPerSecond,
        failedFirstAttempts: started.failed,
        handshake: latency(connectTimeline.handshakeMs),
        tcp: connectTcpDelta,
        ...connectCpu,
      },
      idle: {
        windowSeconds: options.idleSeconds,
        heartbeatSeconds: target.heartbeatSeconds,
        ...idleCpu,
        serverPercentPer1000: (idleCpu.serverPercent * 1000) / n,
        onlineAtEnd,
      },
      storm,
      kill,
      generator: { rssBytes: generatorRss, cpuMs: Math.round(generatorCpuMs), workers: options.workers },
    };
  } finally {
    await generator.stop();
  }
}

/**
 * Builds the counter script (bench/scripts/project.ts: \`onMessage\` counts) and uploads it through the
 * REST API, as \`sdk deploy\` does, so that every device that connects gets a script instance.
 */
export async function deployScript(target: SdkTarget): Promise<TargetResult["deployment"]> {
  const script = await buildScript(counterScript);
  const { client, projectId } = target.provisioned;
  const deployment = await client.api.createDeployment({
    params: { projectId },
    body: { bundle: script.bundle, sourceMap: script.sourceMap, manifest: script.manifest },
  });
  if (deployment.status !== "active") {
    throw new Error(`the counter script's deployment is ${deployment.status}: ${deployment.error ?? ""}`);
  }
  return { id: deployment.id, version: deployment.version, status: deployment.status };
}

/** Stops the server with `signal`, starts a new one, and times until every device is back. */
async function restart(
  target: Target,
  generator: Generator,
  signal: "SIGTERM" | "SIGKILL",
  n: number,
  timeoutMs: number,
  log: (line: string) => void,
): Promise<Restart> {
  log(`[${target.name}] restart: ${signal}, start again`);
  const attemptsBefore = (await generator.status()).attempts;
  generator.mark();
  const stormTcp = listenCounters();
  const sigtermAt = wallMs();
  await target.stop(signal);
  const exitedAt = wallMs();
  const readyAt = await target.start();
  const stormSpan = await Span.begin(target.child, generator);
  await waitAllOnline(generator, n, timeoutMs, log);
  const stormCpu = await stormSpan.end();
  const stormTcpDelta = listenDelta(stormTcp, listenCounters());
  const stormTimeline = await generator.timeline();
  const fromReady = spread(stormTimeline.welcomes, n, readyAt);
  const status = await generator.status();
  const restCount = target.onlineCount?.bind(target);
  const restAllOnline = restCount ? await timeUntil(async () => (await restCount()) >= n, 60_000, 250) : null;
  const restFromReady = restAllOnline === null ? null : Math.round(wallMs() - readyAt);
  log(`[${target.name}] ${signal}: all ${n} back ${fromReady.allMs} ms after the new process was ready`);
  return {
    stopMs: Math.round(exitedAt - sigtermAt),
    downMs: Math.round(readyAt - sigtermAt),
    fromReady,
    fromSigtermMs: fromReady.allMs + Math.round(readyAt - sigtermAt),
    lastDialFromReadyMs: Math.round(stormTimeline.lastDialAt - readyAt),
    handshake: latency(stormTimeline.handshakeMs),
    tcp: stormTcpDelta,
    attempts: status.attempts - attemptsBefore,
    errors: status.errors,
    restAllOnlineFromReadyMs: restFromReady,
    cpu: stormCpu,
  };
}

function perDevice(bytes: number, n: number): number {
  return Math.round(bytes / n);
}

function mib(bytes: number): string {
  return `${(bytes / kib / kib).toFixed(1)} MiB`;
}
