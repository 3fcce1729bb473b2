import { Child } from "../lib/child.ts";
import type { Sampled } from "../lib/measure.ts";
import { type ProcSample, sampleProcess } from "../lib/proc.ts";
import type { Credentials } from "../lib/provision.ts";
import type { Connected, LoadStep, WarmedUp } from "./messages.ts";

/** The load generator: one child process (load-worker.ts) with every device and watch socket. */
export class LoadGenerator implements Sampled {
  readonly #worker: Child;

  private constructor(worker: Child) {
    this.#worker = worker;
  }

  static async launch(): Promise<LoadGenerator> {
    const worker = new Child({ name: "load generator", script: "bench/scripts/load-worker.ts" });
    const generator = new LoadGenerator(worker);
    try {
      await worker.next("ready", 15_000);
    } catch (error) {
      await generator.stop();
      throw error;
    }
    return generator;
  }

  get pid(): number {
    return this.#worker.pid;
  }

  sample(): ProcSample {
    return sampleProcess(this.#worker.pid);
  }

  /** Connects the devices (welcome received), then watch sockets for the first `watch` of them. */
  connect(
    server: string,
    fleet: { projectId: string; token: string; devices: readonly Credentials[]; watchServer: string },
    watch: number,
    concurrency: number,
  ): Promise<Connected> {
    return this.#worker.request<Connected>(
      { type: "connect", server, ...fleet, devices: [...fleet.devices], watch, concurrency },
      "connected",
      120_000 + fleet.devices.length * 50,
    );
  }

  warmUp(timeoutMs: number): Promise<WarmedUp> {
    return this.#worker.request<WarmedUp>({ type: "warmUp", timeoutMs }, "warmedUp", timeoutMs + 30_000);
  }

  /** `rate` messages/s for `seconds`, then up to `drainMs` for the last events. */
  step(rate: number, seconds: number, drainMs: number): Promise<LoadStep> {
    return this.#worker.request<LoadStep>(
      { type: "step", rate, seconds, drainMs },
      "stepDone",
      seconds * 1000 + drainMs + 60_000,
    );
  }

  async disconnect(): Promise<void> {
    await this.#worker.request({ type: "disconnect" }, "disconnected", 30_000);
  }

  /** Drops every connection and ends the worker. */
  async stop(): Promise<void> {
    if (!this.#worker.alive) return;
    try {
      await this.#worker.request({ type: "stop" }, "stopped", 5_000);
    } catch {
      // it is killed below either way
    }
    await this.#worker.stop("SIGTERM", 5_000);
  }
}
