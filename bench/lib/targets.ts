import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Child } from "./child.ts";
import { wallMs } from "./clock.ts";
import { freePort, host, waitForPort } from "./net.ts";
import { type Credentials, countOnline, type Provisioned, provision } from "./provision.ts";
import type { ServerSource } from "./server-source.ts";

const bootTimeoutMs = 60_000;

export interface TargetOptions {
  /** HEARTBEAT_SECONDS of the server: how often it pings each connection. */
  heartbeatSeconds: number;
  /** Node flags for the server process (--cpu-prof when profiling). */
  nodeFlags?: string[];
  /** More environment for the sdk server (the slow-disk shim). */
  env?: Record<string, string>;
}

/** A server under test: started, stopped and restarted as a child process on a fixed port. */
export abstract class Target {
  abstract readonly name: string;
  readonly port: number;
  readonly heartbeatSeconds: number;
  readonly nodeFlags: string[];
  readonly env: Record<string, string>;
  #child: Child | undefined;

  constructor(port: number, options: TargetOptions) {
    this.port = port;
    this.heartbeatSeconds = options.heartbeatSeconds;
    this.nodeFlags = options.nodeFlags ?? [];
    this.env = options.env ?? {};
  }

  /** The address the devices dial (`host:port`, ws://). */
  get server(): string {
    return `${host}:${this.port}`;
  }

  get child(): Child {
    if (!this.#child) throw new Error(`${this.name} is not running`);
    return this.#child;
  }

  protected abstract spawn(): Child;

  /** Devices `count` of them can connect with; the server is running, freshly booted, afterwards. */
  abstract prepare(count: number, log: (line: string) => void): Promise<Credentials[]>;

  /** Devices the server itself counts as online, when it can tell (the sdk server's REST API). */
  onlineCount?(): Promise<number>;

  /** Starts the process; resolves with when its port accepted connections (wall clock, ms). */
  async start(): Promise<number> {
    const child = this.spawn();
    this.#child = child;
    await Promise.race([
      waitForPort(this.port, bootTimeoutMs),
      child.exited.then(({ code }) => {
        throw new Error(`${this.name} exited (${code}) while starting\n${child.tail()}`);
      }),
    ]);
    return wallMs();
  }

  /** SIGTERM and wait for the exit (SIGKILL after 15 s); SIGKILL at once with `kill`. */
  async stop(signal: "SIGTERM" | "SIGKILL" = "SIGTERM"): Promise<void> {
    await this.#child?.stop(signal, 15_000);
  }

  /** Stops what is left (SIGTERM, then SIGKILL after 10 s) and removes temporary files. */
  async dispose(): Promise<void> {
    await this.#child?.stop("SIGTERM", 10_000);
  }
}

/** The sdk server (packages/server) with its SQLite database in a temporary DATA_DIR. */
export class SdkTarget extends Target {
  readonly name = "sdk";
  readonly dataDir: string;
  readonly source: ServerSource;
  #provisioned: Provisioned | undefined;

  private constructor(port: number, options: TargetOptions, source: ServerSource) {
    super(port, options);
    this.source = source;
    this.dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "sdk-bench-"));
  }

  static async create(source: ServerSource, options: TargetOptions): Promise<SdkTarget> {
    return new SdkTarget(await freePort(), options, source);
  }

  /** The user, project and devices prepare() created. */
  get provisioned(): Provisioned {
    if (!this.#provisioned) throw new Error("no devices provisioned yet");
    return this.#provisioned;
  }

  protected spawn(): Child {
    return new Child({
      name: "sdk server",
      script: path.join(this.source.root, "packages/server/src/main.ts"),
      probe: true,
      nodeFlags: this.nodeFlags,
      env: {
        PORT: String(this.port),
        HOST: host,
        DATA_DIR: this.dataDir,
        LOG_LEVEL: "warn",
        LOG_FORMAT: "json",
        HEARTBEAT_SECONDS: String(this.heartbeatSeconds),
        ...this.env,
      },
    });
  }

  /**
   * Boots, registers the first user, creates a project and `count` devices through the REST API,
   * then restarts the server on the same DATA_DIR, so that measurements start on a freshly booted
   * server with the devices in its database, without the garbage left by provisioning.
   */
  async prepare(count: number, log: (line: string) => void): Promise<Credentials[]> {
    await this.start();
    log(`  sdk server up on ${this.server}, DATA_DIR ${this.dataDir}`);
    this.#provisioned = await provision(`http://${this.server}`, count, 16, log);
    await this.stop();
    await this.start();
    log("  sdk server restarted on the same DATA_DIR");
    return this.#provisioned.devices;
  }

  override onlineCount(): Promise<number> {
    return countOnline(this.provisioned);
  }

  override async dispose(): Promise<void> {
    await super.dispose();
    fs.rmSync(this.dataDir, { recursive: true, force: true });
  }
}

/**
 * A plain `ws` server standing in for the sdk (`script`, relative to the repository root, e.g.
 * bench/connections/reference-server.ts): any Basic credentials are accepted.
 */
class ReferenceTarget extends Target {
  readonly name = "reference";
  readonly script: string;

  private constructor(port: number, options: TargetOptions, script: string) {
    super(port, options);
    this.script = script;
  }

  static async create(script: string, options: TargetOptions): Promise<ReferenceTarget> {
    return new ReferenceTarget(await freePort(), options, script);
  }

  protected spawn(): Child {
    return new Child({
      name: "reference server",
      script: this.script,
      probe: true,
      nodeFlags: this.nodeFlags,
      env: { PORT: String(this.port), HOST: host, HEARTBEAT_SECONDS: String(this.heartbeatSeconds) },
    });
  }

  async prepare(count: number): Promise<Credentials[]> {
    await this.start();
    return Array.from({ length: count }, (_, i) => ({ deviceId: `ref-${i + 1}`, secret: "unchecked" }));
  }
}

/** Starts the named target: the sdk server from `source`, or the benchmark's reference script. */
export function startTarget(
  name: string,
  source: ServerSource,
  referenceScript: string,
  options: { heartbeatSeconds: number; profileDir?: string; env?: Record<string, string> },
): Promise<Target> {
  const nodeFlags = options.profileDir
    ? ["--cpu-prof", `--cpu-prof-dir=${path.resolve(options.profileDir)}`]
    : [];
  const targetOptions = { heartbeatSeconds: options.heartbeatSeconds, nodeFlags, env: options.env };
  return name === "sdk"
    ? SdkTarget.create(source, targetOptions)
    : ReferenceTarget.create(referenceScript, targetOptions);
}
