/**
 * One hostile project against the rest: for each case a fresh sdk server runs the measured
 * project (one simulated device sending `tick`s at --rate, its script storing each as state, a
 * watcher timing them) next to a hostile project's device, while /health is polled. Then the
 * hostile project's owner deploys a fixed script and the run times it going live. The case
 * "none" (no hostile project) is the reference, in the same invocation.
 */
import { SimulatedDevice } from "@sdk/simulator";
import WebSocket from "ws";
import { resultsFile, writeResults } from "../lib/json.ts";
import { latency } from "../lib/measure.ts";
import { sleep } from "../lib/net.ts";
import { positive } from "../lib/options.ts";
import { machineInfo, sampleProcess } from "../lib/proc.ts";
import { type Provisioned, provision } from "../lib/provision.ts";
import { progressLog, runBench } from "../lib/run.ts";
import { workingTree } from "../lib/server-source.ts";
import { SdkTarget } from "../lib/targets.ts";
import { type Built, buildScript } from "../scripts/project.ts";
import { fixedScript, hostileScripts, tickScript } from "./scripts.ts";
import { type CaseResult, printTable } from "./table.ts";

const usage = `usage: node bench/isolation/run.ts [--seconds S] [--rate N] [--cases none,busy-timers,...]
  --seconds S   measured window per case (default 20), after a 3 s warm-up
  --rate N      ticks/s from the measured project's device (default 1000)
  --cases LIST  default: none (the reference) and every hostile case: ${Object.keys(hostileScripts).join(", ")}`;

function options() {
  const args = process.argv.slice(2);
  const get = (name: string) => {
    const i = args.indexOf(`--${name}`);
    return i >= 0 ? args[i + 1] : undefined;
  };
  if (args.includes("--help")) {
    console.log(usage);
    process.exit(0);
  }
  const cases = (get("cases") ?? ["none", ...Object.keys(hostileScripts)].join(",")).split(",");
  for (const c of cases)
    if (c !== "none" && !hostileScripts[c]) throw new Error(`unknown case ${c}\n${usage}`);
  return {
    seconds: positive("seconds", get("seconds"), 20, usage),
    rate: positive("rate", get("rate"), 1000, usage),
    cases,
  };
}

const log = progressLog();
const targets = new Set<SdkTarget>();
const devices = new Set<SimulatedDevice>();

async function deploy(p: Provisioned, projectId: string, script: Built) {
  const started = performance.now();
  const deployment = await p.client.api.createDeployment({
    params: { projectId },
    body: { bundle: script.bundle, sourceMap: script.sourceMap, manifest: script.manifest },
  });
  if (deployment.status !== "active")
    throw new Error(`deployment ${deployment.status}: ${deployment.error ?? ""}`);
  return performance.now() - started;
}

function watch(
  target: SdkTarget,
  token: string,
  projectId: string,
  deviceId: string,
  onState: (m: { entityId: string; value: unknown }) => void,
) {
  return new Promise<WebSocket>((resolve, reject) => {
    const socket = new WebSocket(`ws://${target.server}/v1/projects/${projectId}/devices/${deviceId}/watch`, {
      headers: { authorization: `Bearer ${token}` },
    });
    socket.on("message", (data) => {
      const m = JSON.parse(String(data)) as { type: string; entityId: string; value: unknown };
      if (m.type === "snapshot") resolve(socket);
      if (m.type === "state") onState(m);
    });
    socket.once("error", reject);
  });
}

function device(target: SdkTarget, credentials: { deviceId: string; secret: string }) {
  const sim = new SimulatedDevice({ server: target.server, ...credentials });
  devices.add(sim);
  return sim;
}

async function runCase(
  name: string,
  built: Record<string, Built>,
  o: ReturnType<typeof options>,
): Promise<CaseResult> {
  const target = await SdkTarget.create(workingTree(), { heartbeatSeconds: 15 });
  targets.add(target);
  try {
    await target.start();
    const p = await provision(`http://${target.server}`, 1, 1, () => {});
    const client = p.client;
    const measured = { projectId: p.projectId, ...p.devices[0]! };
    await deploy(p, measured.projectId, built.tick!);
    const good = device(target, measured);
    good.start();
    await good.waitFor("connected", 30_000);
    const sent = new Map<number, number>();
    const latencies: number[] = [];
    let measuring = false;
    /** The ticks sent in the measured window. */
    const window = { from: Number.POSITIVE_INFINITY, to: Number.POSITIVE_INFINITY };
    const ws = await watch(target, p.token, measured.projectId, measured.deviceId, (m) => {
      if (m.entityId !== "v") return;
      const at = sent.get(m.value as number);
      if (at === undefined) return;
      sent.delete(m.value as number);
      const n = m.value as number;
      if (n > window.from && n <= window.to) latencies.push(performance.now() - at);
    });

    let hostile: { projectId: string; deviceId: string } | null = null;
    if (name !== "none") {
      const project = await client.api.createProject({ body: { name: "hostile" } });
      const created = await client.api.createDevice({
        params: { projectId: project.id },
        body: { name: "hostile", board: "pico_w" },
      });
      await deploy(p, project.id, built[name]!);
      const sim = device(target, created.credentials);
      sim.start();
      await sim.waitFor("connected", 30_000);
      hostile = { projectId: project.id, deviceId: created.device.id };
    }

    // The load: --rate ticks/s in bursts every 10 ms; /health polled back to back, 20 a second.
    let seq = 0;
    const perTick = o.rate / 100;
    let owed = 0;
    const ticker = setInterval(() => {
      owed += perTick;
      for (; owed >= 1; owed--) {
        seq++;
        sent.set(seq, performance.now());
        good.sendEvent("tick", { seq });
      }
    }, 10);
    const health: number[] = [];
    let polling = true;
    let rssMax = 0;
    const poller = (async () => {
      while (polling) {
        const started = performance.now();
        const ok = await fetch(`http://${target.server}/health`).then(
          (r) => r.ok,
          () => false,
        );
        if (measuring) health.push(ok ? performance.now() - started : Number.POSITIVE_INFINITY);
        await sleep(50);
      }
    })();
    const rss = setInterval(() => {
      rssMax = Math.max(rssMax, sampleProcess(target.child.pid).rssBytes);
    }, 500);
    await sleep(3000);
    measuring = true;
    window.from = seq;
    await sleep(o.seconds * 1000);
    measuring = false;
    window.to = seq;
    const offered = window.to - window.from;
    clearInterval(ticker);
    await sleep(1000);
    polling = false;
    await poller;

    let redeployMs: number | null = null;
    let liveMs: number | null = null;
    if (hostile) {
      const started = performance.now();
      redeployMs = await deploy(p, hostile.projectId, built.fixed!);
      for (;;) {
        const state = await client.api.getDeviceState({ params: hostile });
        if (state.some((v) => v.entityId === "fixed")) break;
        if (performance.now() - started > 60_000) break;
        await sleep(20);
      }
      liveMs = performance.now() - started;
    }
    clearInterval(rss);
    ws.close();
    const sortedHealth = health.sort((a, b) => a - b);
    const sortedMessages = latencies.sort((a, b) => a - b);
    const result: CaseResult = {
      case: name,
      offered,
      received: sortedMessages.length,
      message: latency(sortedMessages, 1),
      health: latency(sortedHealth, 1),
      healthRequests: sortedHealth.length,
      redeployMs: redeployMs === null ? null : Math.round(redeployMs),
      liveMs: liveMs === null ? null : Math.round(liveMs),
      serverRssMaxBytes: rssMax,
    };
    log(
      `[${name}] message→watcher p99 ${result.message.p99Ms} ms (${result.received}/${offered}), /health p99 ${result.health.p99Ms} ms, ` +
        `redeploy ${result.redeployMs ?? "-"} ms (live ${result.liveMs ?? "-"} ms), RSS max ${Math.round(rssMax / 1048576)} MiB`,
    );
    return result;
  } finally {
    for (const sim of devices) await sim.stop().catch(() => {});
    devices.clear();
    await target.dispose();
    targets.delete(target);
  }
}

async function main() {
  const o = options();
  const source = workingTree();
  log(`isolation bench: ${source.description}; ${o.seconds} s per case at ${o.rate} ticks/s`);
  const built: Record<string, Built> = {
    tick: await buildScript(tickScript),
    fixed: await buildScript(fixedScript),
  };
  for (const c of o.cases) if (c !== "none") built[c] = await buildScript(hostileScripts[c]!);
  const results: CaseResult[] = [];
  for (const c of o.cases) results.push(await runCase(c, built, o));
  const file = resultsFile(`isolation-${new Date().toISOString().slice(0, 10)}`);
  writeResults(file, {
    commit: source.commit,
    dirty: source.dirty,
    machine: machineInfo(),
    options: o,
    results,
  });
  log(`results: ${file}`);
  printTable(results);
}

runBench(
  main,
  async () => {
    for (const sim of devices) await sim.stop().catch(() => {});
    for (const target of targets) await target.dispose();
  },
  { timeoutMinutes: 30, log },
);
