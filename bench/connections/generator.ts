import { Child } from "../lib/child.ts";
import { type ProcSample, sampleProcesses } from "../lib/proc.ts";
import type { Credentials } from "../lib/provision.ts";
import type { FromWorker, WorkerStatus } from "./messages.ts";

type Started = Extract<FromWorker, { type: "started" }>;
type Timeline = Extract<FromWorker, { type: "timeline" }>;

export interface Welcomes {
  /** Wall-clock times (ms), sorted. */
  welcomes: number[];
  /** From dial to welcome, for each welcome (ms), sorted. */
  handshakeMs: number[];
  /** When the last attempt that got a welcome dialled (wall clock, ms). */
  lastDialAt: number;
}

const byValue = (a: number, b: number) => a - b;

/** The load generator: the devices split over `workers` child processes, each a simulator Fleet. */
export class Generator {
  readonly #workers: Child[];

  private constructor(workers: Child[]) {
    this.#workers = workers;
  }

  static async launch(workers: number): Promise<Generator> {
    const children = Array.from(
      { length: workers },
      (_, i) => new Child({ name: `generator ${i + 1}`, script: "bench/connections/fleet-worker.ts" }),
    );
    const generator = new Generator(children);
    try {
      await Promise.all(children.map((c) => c.next("ready", 15_000)));
    } catch (error) {
      await generator.stop();
      throw error;
    }
    return generator;
  }

  get pids(): number[] {
    return this.#workers.map((w) => w.pid);
  }

  sample(): ProcSample {
    return sampleProcesses(this.pids);
  }

  /**
   * Starts every device (handshakes bounded by `concurrency` over all workers). Resolves once each
   * first attempt got its welcome or failed, with when the first device dialled.
   */
  async start(
    server: string,
    devices: readonly Credentials[],
    concurrency: number,
    timeoutMs: number,
  ): Promise<{ firstDialAt: number; failed: number }> {
    const n = this.#workers.length;
    const perWorker = Math.max(1, Math.ceil(concurrency / n));
    const started = await Promise.all(
      this.#workers.map((worker, i) =>
        worker.request<Started>(
          {
            type: "start",
            server,
            devices: devices.filter((_, j) => j % n === i),
            concurrency: perWorker,
          },
          "started",
          timeoutMs,
        ),
      ),
    );
    return {
      firstDialAt: Math.min(...started.map((s) => s.firstDialAt)),
      failed: started.reduce((sum, s) => sum + s.failed, 0),
    };
  }

  /** Forgets the welcome times so far: the next timeline() starts here. */
  mark(): void {
    for (const worker of this.#workers) worker.send({ type: "mark" });
  }

  async status(): Promise<Omit<WorkerStatus, "type">> {
    const all = await Promise.all(
      this.#workers.map((w) => w.request<WorkerStatus>({ type: "status" }, "status", 10_000)),
    );
    const errors: Record<string, number> = {};
    for (const s of all) for (const [k, v] of Object.entries(s.errors)) errors[k] = (errors[k] ?? 0) + v;
    const sum = (key: "online" | "attempts" | "welcomes" | "welcomedSinceMark" | "disconnects") =>
      all.reduce((total, s) => total + s[key], 0);
    return {
      online: sum("online"),
      attempts: sum("attempts"),
      welcomes: sum("welcomes"),
      welcomedSinceMark: sum("welcomedSinceMark"),
      disconnects: sum("disconnects"),
      errors,
    };
  }

  /** The welcomes since the last mark. */
  async timeline(): Promise<Welcomes> {
    const all = await Promise.all(
      this.#workers.map((w) => w.request<Timeline>({ type: "timeline" }, "timeline", 30_000)),
    );
    const welcomes = all.flatMap((t) => t.welcomes);
    const dialed = all.flatMap((t) => t.dialed);
    return {
      welcomes: [...welcomes].sort(byValue),
      handshakeMs: welcomes.map((w, i) => w - dialed[i]!).sort(byValue),
      lastDialAt: dialed.reduce((max, t) => Math.max(max, t), 0),
    };
  }

  /** Drops every connection and ends the workers. */
  async stop(): Promise<void> {
    await Promise.all(
      this.#workers.map(async (worker) => {
        if (!worker.alive) return;
        try {
          await worker.request({ type: "stop" }, "stopped", 5_000);
        } catch {
          // it is killed below either way
        }
        await worker.stop("SIGTERM", 5_000);
      }),
    );
  }
}
