/**
 * A long-running part of the server (an extension, in zigbee2mqtt's sense): its constructor only
 * assigns; timers, subscriptions and I/O begin in `start()` and end in `stop()`. The server starts
 * its parts in list order once it listens and stops them in reverse order when it closes.
 */
export interface Lifecycle {
  readonly name: string;
  start(): void | Promise<void>;
  stop(): void | Promise<void>;
}

/** Starts and stops a list of parts; a part that fails to stop does not keep the others running. */
export class Lifecycles {
  readonly #parts: readonly Lifecycle[];
  readonly #onError: (error: unknown, part: string) => void;
  #started: Lifecycle[] = [];

  constructor(parts: readonly Lifecycle[], onError: (error: unknown, part: string) => void) {
    this.#parts = parts;
    this.#onError = onError;
  }

  get names(): string[] {
    return this.#parts.map((p) => p.name);
  }

  /** In list order. A part that fails to start stops the ones already started, then throws. */
  async start(): Promise<void> {
    for (const part of this.#parts) {
      if (this.#started.includes(part)) continue;
      try {
        await part.start();
      } catch (error) {
        await this.stop();
        throw error;
      }
      this.#started.push(part);
    }
  }

  /** In reverse order of starting. */
  async stop(): Promise<void> {
    const started = this.#started;
    this.#started = [];
    for (const part of started.reverse()) {
      try {
        await part.stop();
      } catch (error) {
        this.#onError(error, part.name);
      }
    }
  }
}
