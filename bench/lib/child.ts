import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { HeapReport, LoopReport } from "./probe.ts";

export const repoRoot = fileURLToPath(new URL("../../", import.meta.url));
const probeScript = fileURLToPath(new URL("./probe.ts", import.meta.url));
const tailLines = 40;

export interface ChildOptions {
  /** For messages: "sdk server", "reference", "generator 1". */
  name: string;
  /** A script path (relative ones from the repository root). */
  script: string;
  env?: Record<string, string>;
  /** Preload the heap probe (and expose gc) so memory() can ask for heap figures. */
  probe?: boolean;
  /** More node flags (e.g. --cpu-prof). */
  nodeFlags?: string[];
}

/** A node child process with an IPC channel, its output kept (last lines) for error messages. */
export class Child {
  readonly name: string;
  readonly process: ChildProcess;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  readonly #tail: string[] = [];
  #alive = true;

  constructor(options: ChildOptions) {
    this.name = options.name;
    const flags = [
      ...(options.probe ? ["--expose-gc", "--import", probeScript] : []),
      ...(options.nodeFlags ?? []),
    ];
    this.process = spawn(process.execPath, [...flags, options.script], {
      cwd: repoRoot,
      env: { ...process.env, ...options.env },
      stdio: ["ignore", "pipe", "pipe", "ipc"],
    });
    for (const stream of [this.process.stdout, this.process.stderr]) {
      stream?.setEncoding("utf8");
      stream?.on("data", (chunk: string) => this.#keep(chunk));
    }
    this.exited = new Promise((resolve) => {
      this.process.once("exit", (code, signal) => {
        this.#alive = false;
        resolve({ code, signal });
      });
    });
  }

  get pid(): number {
    const pid = this.process.pid;
    if (pid === undefined) throw new Error(`${this.name} did not start`);
    return pid;
  }

  get alive(): boolean {
    return this.#alive;
  }

  /** The last lines the process printed. */
  tail(): string {
    return this.#tail.join("\n");
  }

  send(message: object): void {
    this.process.send(message);
  }

  /** Sends `message` and resolves with the first message back whose type is `replyType`. */
  request<T extends { type: string }>(message: object, replyType: T["type"], timeoutMs: number): Promise<T> {
    const reply = this.next<T>(replyType, timeoutMs);
    this.send(message);
    return reply;
  }

  /** Resolves with the next message whose type is `type`. */
  next<T extends { type: string }>(type: T["type"], timeoutMs: number): Promise<T> {
    return new Promise((resolve, reject) => {
      const onMessage = (message: unknown) => {
        if ((message as { type?: unknown }).type !== type) return;
        done();
        resolve(message as T);
      };
      const onExit = () => {
        done();
        reject(new Error(`${this.name} exited while waiting for ${type}\n${this.tail()}`));
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`${this.name}: no ${type} within ${timeoutMs} ms\n${this.tail()}`));
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        this.process.off("message", onMessage);
        this.process.off("exit", onExit);
      };
      this.process.on("message", onMessage);
      this.process.once("exit", onExit);
    });
  }

  /** Heap figures from the probe (after a full GC when `gc` is true). */
  memory(gc: boolean): Promise<HeapReport> {
    return this.request<HeapReport>({ type: "memory", gc }, "memory", 30_000);
  }

  /** Event-loop busy and idle time so far, from the probe. */
  loop(): Promise<LoopReport> {
    return this.request<LoopReport>({ type: "loop" }, "loop", 30_000);
  }

  /** Sends `signal` and waits for the exit; SIGKILL after `timeoutMs`. */
  async stop(signal: NodeJS.Signals = "SIGTERM", timeoutMs = 15_000): Promise<void> {
    if (!this.#alive) return;
    this.process.kill(signal);
    const timer = setTimeout(() => this.process.kill("SIGKILL"), timeoutMs);
    try {
      await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }

  #keep(chunk: string): void {
    for (const line of chunk.split("\n")) if (line.trim()) this.#tail.push(line);
    if (this.#tail.length > tailLines) this.#tail.splice(0, this.#tail.length - tailLines);
  }
}
