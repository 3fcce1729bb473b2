import { type Cpu, Span, waitIdle, waitQuiet } from "../lib/measure.ts";
import { sleep } from "../lib/net.ts";
import { sampleProcess } from "../lib/proc.ts";
import { SdkTarget, type Target } from "../lib/targets.ts";
import { LoadGenerator } from "./generator.ts";
import type { LoadStep } from "./messages.ts";
import type { Options } from "./options.ts";
import type { Built } from "./project.ts";

export interface StepResult extends Omit<LoadStep, "type"> {
  /** From the step's first send until its last event arrived or the drain ran out. */
  cpu: Cpu;
  serverRssBytes: number;
  generatorRssBytes: number;
  /** After the step, until the server's event loop was quiet again (null: not within 30 s). */
  settleMs: number | null;
  /**
   * Before the step: how long it waited for the rest of the machine to use less than a quarter of
   * a core, and what the rest used in the last second before it started (% of one core).
   */
  quiet: { waitedMs: number; otherPercent: number };
}

interface FleetResult {
  devices: number;
  /** Devices with a watch socket: only their messages are timed. */
  watched: number;
  connectDevicesMs: number;
  connectWatchersMs: number;
  /** Each device's first tick, until every watched one came back (attaches the script instances). */
  warmUpMs: number;
  warmUpMissing: number;
  /** Server RSS with the fleet and its watchers connected, warmed up. */
  serverRssBytes: number;
  steps: StepResult[];
  /** Rates not run because a lower one got less than a quarter of its offered rate through. */
  skippedRates: number[];
}

export interface TargetResult {
  target: string;
  /** Server RSS after boot (for the sdk: restarted after provisioning, script deployed). */
  bootRssBytes: number;
  /** The sdk's deployment of the tick script. */
  deployment: { id: string; version: number; status: string } | null;
  fleets: FleetResult[];
}

const handshakesInFlight = 50;
const settleTimeoutMs = 30_000;
/** At most this long to wait, before each step, for other work on the machine to stop. */
const quietTimeoutMs = 60_000;

/** Uploads the tick script through the REST API (`POST /v1/projects/:id/deployments`). */
async function deploy(target: SdkTarget, script: Built): Promise<TargetResult["deployment"]> {
  const { client, projectId } = target.provisioned;
  const deployment = await client.api.createDeployment({
    params: { projectId },
    body: { bundle: script.bundle, sourceMap: script.sourceMap, manifest: script.manifest },
  });
  if (deployment.status !== "active") {
    throw new Error(`the tick script's deployment is ${deployment.status}: ${deployment.error ?? ""}`);
  }
  return { id: deployment.id, version: deployment.version, status: deployment.status };
}

/** One server: each fleet size in turn, each offered rate in turn. The caller disposes the target. */
export async function benchTarget(
  target: Target,
  script: Built,
  options: Options,
  log: (line: string) => void,
  track: (generator: LoadGenerator) => void,
): Promise<TargetResult> {
  const most = Math.max(...options.devices);
  log(`[${target.name}] preparing ${most} devices`);
  const credentials = await target.prepare(most, log);
  const fleet =
    target instanceof SdkTarget
      ? { projectId: target.provisioned.projectId, token: target.provisioned.token }
      : { projectId: "prj_reference", token: "unchecked" };
  const deployment = target instanceof SdkTarget ? await deploy(target, script) : null;
  if (deployment) log(`[${target.name}] deployed the tick script (v${deployment.version})`);
  const generator = await LoadGenerator.launch();
  track(generator);
  try {
    await sleep(2_000);
    const bootRssBytes = sampleProcess(target.child.pid).rssBytes;
    const fleets: FleetResult[] = [];
    for (const n of options.devices) {
      const devices = credentials.slice(0, n);
      const connected = await generator.connect(
        target.server,
        { ...fleet, devices },
        options.watch,
        handshakesInFlight,
      );
      log(
        `[${target.name}] ${n} devices online in ${connected.devicesMs} ms, ${connected.watched} watchers in ${connected.watchersMs} ms`,
      );
      const warm = await generator.warmUp(30_000);
      if (warm.missing > 0) log(`[${target.name}] warm-up: ${warm.missing} watched devices did not answer`);
      await waitIdle(target.child, settleTimeoutMs);
      const result: FleetResult = {
        devices: n,
        watched: connected.watched,
        connectDevicesMs: connected.devicesMs,
        connectWatchersMs: connected.watchersMs,
        warmUpMs: warm.ms,
        warmUpMissing: warm.missing,
        serverRssBytes: sampleProcess(target.child.pid).rssBytes,
        steps: [],
        skippedRates: [],
      };
      let saturated = false;
      for (const rate of options.rates) {
        if (saturated) {
          result.skippedRates.push(rate);
          continue;
        }
        const quiet = await waitQuiet([target.child.pid, generator.pid, process.pid], quietTimeoutMs);
        if (quiet.waitedMs > 0) {
          log(`[${target.name}] waited ${quiet.waitedMs} ms for other work on the machine to stop`);
        }
        const span = await Span.begin(target.child, generator);
        const load = await generator.step(rate, options.seconds, options.drainSeconds * 1000);
        const cpu = await span.end();
        const serverRssBytes = sampleProcess(target.child.pid).rssBytes;
        const generatorRssBytes = generator.sample().rssBytes;
        const settleMs = await waitIdle(target.child, settleTimeoutMs);
        const { type: _type, ...figures } = load;
        result.steps.push({ ...figures, cpu, serverRssBytes, generatorRssBytes, settleMs, quiet });
        log(
          `[${target.name}] ${n} devices, ${rate}/s offered: ${load.achievedPerSecond}/s through, ` +
            `p50 ${load.latency.p50Ms} ms, p99 ${load.latency.p99Ms} ms, max ${load.latency.maxMs} ms, ` +
            `${load.measured - load.received} of ${load.measured} missing; server ${Math.round(cpu.serverPercent)} % CPU ` +
            `(loop ${Math.round(cpu.serverLoopBusy * 100)} % busy), generator ${Math.round(cpu.generatorPercent)} %, ` +
            `other ${Math.round(cpu.otherPercent)} %, interrupts ${Math.round(cpu.interruptPercent)} %, steal ${Math.round(cpu.stealPercent)} %`,
        );
        saturated = load.achievedPerSecond < rate / 4;
      }
      fleets.push(result);
      await generator.disconnect();
      await waitIdle(target.child, settleTimeoutMs);
    }
    return { target: target.name, bootRssBytes, deployment, fleets };
  } finally {
    await generator.stop();
  }
}
