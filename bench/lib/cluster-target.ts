import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Child } from "./child.ts";
import { freePort, host, waitForPort } from "./net.ts";
import { cpuPercent, type ProcSample, sampleProcess } from "./proc.ts";
import { type Credentials, countOnline, type Provisioned, provision } from "./provision.ts";
import type { ServerSource } from "./server-source.ts";
import { Target, type TargetOptions } from "./targets.ts";

const bootTimeoutMs = 60_000;

export interface ClusterOptions {
  /** 1: one sdk server on PostgreSQL; 2 or more: a cluster on PostgreSQL and NATS (docs/scaling.md). */
  instances: number;
  /** A PostgreSQL database the run may create and drop a schema in. */
  databaseUrl: string;
  /** NATS for the cluster (unused with one instance). */
  natsUrl: string;
}

/** psql against `url`, one statement; its output without alignment. */
function psql(url: string, statement: string): string {
  return execFileSync("psql", [url, "-v", "ON_ERROR_STOP=1", "-tAc", statement], {
    encoding: "utf8",
    timeout: 30_000,
    stdio: ["ignore", "pipe", "pipe"],
  }).trim();
}

/**
 * The sdk server on PostgreSQL (a schema of its own, dropped at the end): one instance, or
 * `instances` of them as a cluster (NATS_URL, a CLUSTER_NAME of their own, one key file, an INSTANCE_ID
 * and DATA_DIR each). The devices dial the first instance (`server`), the watchers the last
 * (`watchServer`): with two, every event crosses the bus from A to B.
 */
export class PostgresTarget extends Target {
  readonly name: string;
  readonly instances: number;
  readonly source: ServerSource;
  readonly #ports: number[];
  readonly #dataDirs: string[];
  readonly #keyFile: string;
  readonly #schema = `sdk_bench_${randomBytes(5).toString("hex")}`;
  readonly #adminUrl: string;
  readonly #natsUrl: string;
  readonly #clusterName = `bench-${randomBytes(4).toString("hex")}`;
  #peers: Child[] = [];
  #provisioned: Provisioned | undefined;

  private constructor(
    ports: number[],
    options: TargetOptions,
    source: ServerSource,
    cluster: ClusterOptions,
  ) {
    super(ports[0]!, options);
    this.instances = cluster.instances;
    this.name = cluster.instances === 1 ? "sdk-pg" : `sdk-pg-x${cluster.instances}`;
    this.source = source;
    this.#ports = ports;
    this.#adminUrl = cluster.databaseUrl;
    this.#natsUrl = cluster.natsUrl;
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "sdk-bench-pg-"));
    this.#dataDirs = ports.map((_, i) => {
      const dir = path.join(root, `instance-${i + 1}`);
      fs.mkdirSync(dir);
      return dir;
    });
    this.#keyFile = path.join(root, "secret.key");
    fs.writeFileSync(this.#keyFile, randomBytes(32).toString("base64"), { mode: 0o600 });
  }

  static async create(
    source: ServerSource,
    options: TargetOptions,
    cluster: ClusterOptions,
  ): Promise<PostgresTarget> {
    const ports: number[] = [];
    for (let i = 0; i < cluster.instances; i++) ports.push(await freePort());
    return new PostgresTarget(ports, options, source, cluster);
  }

  /** Where the watch sockets connect: the last instance. */
  get watchServer(): string {
    return `${host}:${this.#ports.at(-1)}`;
  }

  /** The instances after the first (their CPU and event loops are measured too). */
  get peers(): readonly Child[] {
    return this.#peers;
  }

  get provisioned(): Provisioned {
    if (!this.#provisioned) throw new Error("no devices provisioned yet");
    return this.#provisioned;
  }

  /** The server's DATABASE_URL: the run's schema first on the search path. */
  get #databaseUrl(): string {
    const url = new URL(this.#adminUrl);
    url.searchParams.set("options", `-c search_path=${this.#schema} -c max_parallel_workers_per_gather=0`);
    return url.toString();
  }

  #spawnInstance(i: number): Child {
    const cluster: Record<string, string> =
      this.instances > 1
        ? {
            NATS_URL: this.#natsUrl,
            CLUSTER_NAME: this.#clusterName,
            INSTANCE_ID: `bench-${String.fromCharCode(97 + i)}`,
          }
        : { NATS_URL: "" };
    return new Child({
      name: `sdk instance ${String.fromCharCode(65 + i)}`,
      script: path.join(this.source.root, "packages/server/src/main.ts"),
      probe: true,
      nodeFlags: this.nodeFlags,
      env: {
        PORT: String(this.#ports[i]),
        HOST: host,
        DATA_DIR: this.#dataDirs[i]!,
        DATABASE_URL: this.#databaseUrl,
        SECRET_KEY_FILE: this.#keyFile,
        LOG_LEVEL: "warn",
        LOG_FORMAT: "json",
        HEARTBEAT_SECONDS: String(this.heartbeatSeconds),
        ...cluster,
      },
    });
  }

  protected spawn(): Child {
    return this.#spawnInstance(0);
  }

  /** The first instance (it migrates the schema), then the others together. */
  override async start(): Promise<number> {
    const at = await super.start();
    this.#peers = this.#ports.slice(1).map((_, i) => this.#spawnInstance(i + 1));
    await Promise.all(
      this.#peers.map((child, i) =>
        Promise.race([
          waitForPort(this.#ports[i + 1]!, bootTimeoutMs),
          child.exited.then(({ code }) => {
            throw new Error(`${child.name} exited (${code}) while starting\n${child.tail()}`);
          }),
        ]),
      ),
    );
    return at;
  }

  override async stop(signal: "SIGTERM" | "SIGKILL" = "SIGTERM"): Promise<void> {
    await Promise.all(this.#peers.map((child) => child.stop(signal, 15_000)));
    await super.stop(signal);
  }

  /** As the SQLite target: provision through the first instance, then restart every instance. */
  async prepare(count: number, log: (line: string) => void): Promise<Credentials[]> {
    psql(this.#adminUrl, `create schema ${this.#schema}`);
    await this.start();
    log(`  ${this.name}: ${this.instances} instance(s) on ${this.#ports.join(", ")}, schema ${this.#schema}`);
    this.#provisioned = await provision(`http://${this.server}`, count, 16, log);
    await this.stop();
    await this.start();
    log(`  ${this.name}: restarted on the same schema`);
    return this.#provisioned.devices;
  }

  override onlineCount(): Promise<number> {
    return countOnline(this.provisioned);
  }

  /** How many of the seqs firstSeq … firstSeq + count − 1 the state history holds (each once). */
  countStored(firstSeq: number, count: number): number {
    const n = psql(
      this.#adminUrl,
      `select count(distinct value::bigint) from ${this.#schema}.device_state_history
       where entity_id = 'v' and value ~ '^[0-9]+$' and value::bigint between ${firstSeq} and ${firstSeq + count - 1}`,
    );
    return Number(n);
  }

  override async dispose(): Promise<void> {
    await Promise.all(this.#peers.map((child) => child.stop("SIGTERM", 10_000)));
    await super.dispose();
    try {
      psql(this.#adminUrl, `drop schema if exists ${this.#schema} cascade`);
    } finally {
      fs.rmSync(path.dirname(this.#keyFile), { recursive: true, force: true });
    }
  }
}

/** CPU (and event-loop share) of processes over a span: the other instances, NATS and PostgreSQL. */
export interface ProcessCpu {
  name: string;
  /** % of one core. */
  percent: number;
  /** Share of the span the event loop was busy (sdk instances only). */
  loopBusy: number | null;
}

/** user + system CPU ms of every process whose command name is `comm` (they come and go). */
function cpuByName(comm: string): Map<number, number> {
  const found = new Map<number, number>();
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (fs.readFileSync(`/proc/${entry}/comm`, "utf8").trim() !== comm) continue;
      found.set(Number(entry), sampleProcess(Number(entry)).cpuMs);
    } catch {
      // gone in between
    }
  }
  return found;
}

/**
 * Starts measuring the peers (sdk instances after the first) and the shared services the cluster
 * uses (`nats-server`, `postgres`: every process of that name on the machine, so other users of
 * the same PostgreSQL count too); the returned function ends the span.
 */
export async function beginServices(peers: readonly Child[]): Promise<() => Promise<ProcessCpu[]>> {
  const start = performance.now();
  const peerStart = await Promise.all(
    peers.map(async (child) => ({ child, proc: sampleProcess(child.pid), loop: await child.loop() })),
  );
  const services = ["nats-server", "postgres"].map((comm) => ({ comm, before: cpuByName(comm) }));
  return async () => {
    const wallMs = performance.now() - start;
    const result: ProcessCpu[] = [];
    for (const { child, proc, loop } of peerStart) {
      const now: ProcSample = sampleProcess(child.pid);
      const after = await child.loop();
      const active = after.activeMs - loop.activeMs;
      const idle = after.idleMs - loop.idleMs;
      result.push({
        name: child.name,
        percent: cpuPercent(proc, now),
        loopBusy: active + idle > 0 ? active / (active + idle) : 0,
      });
    }
    for (const { comm, before } of services) {
      const after = cpuByName(comm);
      if (before.size === 0 && after.size === 0) continue;
      let ms = 0;
      for (const [pid, cpu] of after) ms += cpu - (before.get(pid) ?? 0);
      result.push({ name: comm, percent: wallMs > 0 ? (ms / wallMs) * 100 : 0, loopBusy: null });
    }
    return result;
  };
}
