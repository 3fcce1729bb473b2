import path from "node:path";
import { DatabaseSync } from "node:sqlite";
import { beginServices, PostgresTarget, type ProcessCpu } from "../lib/cluster-target.ts";
import { type Cpu, Span, waitIdle, waitQuiet } from "../lib/measure.ts";
import { sleep } from "../lib/net.ts";
import { sampleProcess } from "../lib/proc.ts";
import type { Provisioned } from "../lib/provision.ts";
import { SdkTarget, type Target } from "../lib/targets.ts";
import { LoadGenerator } from "./generator.ts";
import { type HttpPathResult, startHttpProbe } from "./http-probe.ts";
import type { LoadStep } from "./messages.ts";
import type { Options } from "./options.ts";
import type { Built } from "./project.ts";

export interface StepResult extends Omit<LoadStep, "type"> {
  /** From the step's first send until its last event arrived or the drain ran out. */
  cpu: Cpu;
  serverRssBytes: number;
  /** The most server RSS seen, sampled every 100 ms from the step's first send to the end of its drain. */
  serverPeakRssBytes: number;
  generatorRssBytes: number;
  /**
   * sdk only: how many of the step's messages (all devices, watched or not) are in the stored
   * state history once the step is over (each seq counted once); null for the reference.
   */
  stored: number | null;
  /**
   * `--instances`: CPU over the step of the other sdk instances (and their event loops), of
   * nats-server and of PostgreSQL's processes; `cpu.server*` is the first instance (the devices').
   */
  services?: ProcessCpu[];
  /** After the step, until the server's event loop was quiet again (null: not within 30 s). */
  settleMs: number | null;
  /**
   * Before the step: how long it waited for the rest of the machine to use less than a quarter of
   * a core, and what the rest used in the last second before it started (% of one core).
   */
  quiet: { waitedMs: number; otherPercent: number };
  /**
   * sdk only: the REST API asked during the step (`GET /health` and a device's `GET …/state` in
   * turn, one at a time, 20 a second at most), each path's figures; absent for the reference and
   * in older results.
   */
  http?: { health: HttpPathResult; state: HttpPathResult };
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
  /**
   * The overload step (`overloadFactor` × the most the sdk got through at this fleet size), then a
   * step at a tenth of that rate for 2 s to show the server recovered by itself.
   */
  overload: { step: StepResult; recovery: StepResult } | null;
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
const rssSampleMs = 100;

/** Counts the distinct seqs firstSeq … firstSeq + count − 1 in the state history of the sdk's database. */
function countStored(dataDir: string, firstSeq: number, count: number): number {
  const db = new DatabaseSync(path.join(dataDir, "sdk.db"), { readOnly: true, timeout: 10_000 });
  try {
    const row = db
      .prepare(
        `select count(distinct cast(value as integer)) as n from device_state_history
         where entity_id = 'v' and cast(value as integer) between ? and ?`,
      )
      .get(firstSeq, firstSeq + count - 1) as { n: number };
    return Number(row.n);
  } finally {
    db.close();
  }
}

/** The user, project and devices of an sdk target (null for the reference). */
const provisionedOf = (target: Target): Provisioned | null =>
  target instanceof SdkTarget || target instanceof PostgresTarget ? target.provisioned : null;

/** Waits until the event loops of the server (every instance) are quiet; the first one's time. */
async function settle(target: Target): Promise<number | null> {
  const peers = target instanceof PostgresTarget ? target.peers : [];
  const [first] = await Promise.all([
    waitIdle(target.child, settleTimeoutMs),
    ...peers.map((peer) => waitIdle(peer, settleTimeoutMs)),
  ]);
  return first ?? null;
}

/** Uploads the tick script through the REST API (`POST /v1/projects/:id/deployments`). */
async function deploy(provisioned: Provisioned, script: Built): Promise<TargetResult["deployment"]> {
  const { client, projectId } = provisioned;
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
  /** Per fleet size, the overload step's offered rate: set by the first target (the sdk), reused by the next. */
  overloadRates: Map<number, number>,
): Promise<TargetResult> {
  const most = Math.max(...options.devices);
  log(`[${target.name}] preparing ${most} devices`);
  const credentials = await target.prepare(most, log);
  const provisioned = provisionedOf(target);
  const fleet = provisioned
    ? { projectId: provisioned.projectId, token: provisioned.token }
    : { projectId: "prj_reference", token: "unchecked" };
  const deployment = provisioned ? await deploy(provisioned, script) : null;
  const peers = target instanceof PostgresTarget ? target.peers : [];
  const watchServer = target instanceof PostgresTarget ? target.watchServer : target.server;
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
        { ...fleet, devices, watchServer },
        options.watch,
        handshakesInFlight,
      );
      log(
        `[${target.name}] ${n} devices online in ${connected.devicesMs} ms, ${connected.watched} watchers in ${connected.watchersMs} ms`,
      );
      const warm = await generator.warmUp(30_000);
      if (warm.missing > 0) log(`[${target.name}] warm-up: ${warm.missing} watched devices did not answer`);
      await settle(target);
      const result: FleetResult = {
        devices: n,
        watched: connected.watched,
        connectDevicesMs: connected.devicesMs,
        connectWatchersMs: connected.watchersMs,
        warmUpMs: warm.ms,
        warmUpMissing: warm.missing,
        serverRssBytes: sampleProcess(target.child.pid).rssBytes,
        steps: [],
        overload: null,
        skippedRates: [],
      };
      let saturated = false;
      const runStep = async (rate: number, seconds: number, drainMs: number): Promise<StepResult> => {
        const quiet = await waitQuiet(
          [target.child.pid, ...peers.map((p) => p.pid), generator.pid, process.pid],
          options.quietTimeoutSeconds * 1000,
        );
        if (quiet.waitedMs > 0) {
          log(`[${target.name}] waited ${quiet.waitedMs} ms for other work on the machine to stop`);
        }
        let serverPeakRssBytes = sampleProcess(target.child.pid).rssBytes;
        const sampler = setInterval(() => {
          serverPeakRssBytes = Math.max(serverPeakRssBytes, sampleProcess(target.child.pid).rssBytes);
        }, rssSampleMs);
        const span = await Span.begin(target.child, generator);
        const endServices = target instanceof PostgresTarget ? await beginServices(peers) : null;
        const probe = provisioned
          ? startHttpProbe(
              `http://${target.server}`,
              ["/health", `/v1/projects/${provisioned.projectId}/devices/${devices[0]!.deviceId}/state`],
              provisioned.token,
            )
          : null;
        let load: LoadStep;
        let http: StepResult["http"];
        try {
          load = await generator.step(rate, seconds, drainMs);
        } finally {
          clearInterval(sampler);
          const [health, state] = (await probe?.stop()) ?? [];
          if (health && state) http = { health, state };
        }
        const cpu = await span.end();
        const services = endServices ? await endServices() : undefined;
        const serverRssBytes = sampleProcess(target.child.pid).rssBytes;
        serverPeakRssBytes = Math.max(serverPeakRssBytes, serverRssBytes);
        const generatorRssBytes = generator.sample().rssBytes;
        const settleMs = await settle(target);
        const stored =
          target instanceof SdkTarget
            ? countStored(target.dataDir, load.firstSeq, load.sent)
            : target instanceof PostgresTarget
              ? target.countStored(load.firstSeq, load.sent)
              : null;
        const { type: _type, ...figures } = load;
        log(
          `[${target.name}] ${n} devices, ${rate}/s offered: ${load.achievedPerSecond}/s through, ` +
            `p50 ${load.latency.p50Ms} ms, p99 ${load.latency.p99Ms} ms (after the first second ${load.latencySteady.p99Ms} ms), max ${load.latency.maxMs} ms, ` +
            `${load.measured - load.received} of ${load.measured} missing` +
            (stored === null ? "" : `, ${stored} of ${load.sent} stored`) +
            `; server ${Math.round(cpu.serverPercent)} % CPU ` +
            `(loop ${Math.round(cpu.serverLoopBusy * 100)} % busy), ` +
            (Number.isFinite(cpu.serverWrittenBytes)
              ? `wrote ${Math.round(cpu.serverWrittenBytes / 1e6)} MB in ${cpu.serverWriteCalls} calls, `
              : "") +
            `peak RSS ${Math.round(serverPeakRssBytes / 1048576)} MiB, ` +
            (http
              ? `/health p50 ${http.health.latency.p50Ms} ms, p99 ${http.health.latency.p99Ms} ms, ` +
                `state read p50 ${http.state.latency.p50Ms} ms, p99 ${http.state.latency.p99Ms} ms ` +
                `(${http.health.failed + http.state.failed} of ${http.health.requests + http.state.requests} failed), `
              : "") +
            `generator ${Math.round(cpu.generatorPercent)} %, ` +
            `other ${Math.round(cpu.otherPercent)} %, interrupts ${Math.round(cpu.interruptPercent)} %, steal ${Math.round(cpu.stealPercent)} %` +
            (services ? `; ${services.map((p) => `${p.name} ${Math.round(p.percent)} %`).join(", ")}` : ""),
        );
        return {
          ...figures,
          cpu,
          serverRssBytes,
          serverPeakRssBytes,
          generatorRssBytes,
          stored,
          settleMs,
          quiet,
          ...(services ? { services } : {}),
          ...(http ? { http } : {}),
        };
      };
      for (const rate of options.rates) {
        if (saturated) {
          result.skippedRates.push(rate);
          continue;
        }
        const step = await runStep(rate, options.seconds, options.drainSeconds * 1000);
        result.steps.push(step);
        saturated = step.achievedPerSecond < rate / 4;
      }
      if (options.overloadFactor > 0) {
        let rate = overloadRates.get(n);
        if (rate === undefined) {
          const most = Math.max(0, ...result.steps.map((s) => s.achievedPerSecond));
          rate = Math.max(1, Math.round(most * options.overloadFactor));
          overloadRates.set(n, rate);
        }
        log(`[${target.name}] overload: ${rate}/s for ${options.overloadSeconds} s`);
        const step = await runStep(rate, options.overloadSeconds, options.overloadDrainSeconds * 1000);
        const recovery = await runStep(Math.max(1, Math.round(rate / 10)), 2, options.drainSeconds * 1000);
        result.overload = { step, recovery };
      }
      fleets.push(result);
      await generator.disconnect();
      await settle(target);
    }
    return { target: target.name, bootRssBytes, deployment, fleets };
  } finally {
    await generator.stop();
  }
}
