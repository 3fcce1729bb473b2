import { type CommandType, commandResults, isSimulatorCommand, simulatorCommandResults } from "@sdk/protocol";
import { AppError } from "../../errors.ts";

interface Pending {
  type: CommandType;
  resolve(value: unknown): void;
  reject(error: AppError): void;
  timer: NodeJS.Timeout;
}

/** Command ids are unique among a server's open commands (they wrap after two billion). */
export function commandIds(): () => number {
  let last = 0;
  return () => {
    last = (last % 2_000_000_000) + 1;
    return last;
  };
}

/**
 * The commands in flight on one connection: ids, the answers they wait for, their timeouts, and the
 * check of each result against its schema.
 */
export class CommandRpc {
  readonly #pending = new Map<number, Pending>();
  readonly #send: (frame: string) => void;
  readonly #nextId: () => number;

  constructor(send: (frame: string) => void, nextId: () => number) {
    this.#send = send;
    this.#nextId = nextId;
  }

  /** Sends a validated command; rejects with `device_timeout` when no answer comes in time. */
  call(
    type: CommandType,
    args: Record<string, unknown>,
    timeoutMs: number,
    maxFrame: number,
  ): Promise<unknown> {
    const id = this.#nextId();
    const frame = JSON.stringify({ ...args, type, id });
    if (Buffer.byteLength(frame) > maxFrame) {
      throw new AppError(
        "invalid_argument",
        `${type} is ${Buffer.byteLength(frame)} bytes; this device accepts at most ${maxFrame}`,
      );
    }
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        reject(new AppError("device_timeout", `${type}: no answer within ${timeoutMs / 1000}s`));
      }, timeoutMs);
      this.#pending.set(id, { type, resolve, reject, timer });
      try {
        this.#send(frame);
      } catch (error) {
        // Not sent (the device is not reading what it was sent): nothing will answer it.
        this.#take(id);
        reject(error);
      }
    });
  }

  /** A `result` frame. False when no command waits for this id. */
  settle(id: number, value: unknown): boolean {
    const pending = this.#take(id);
    if (!pending) return false;
    const schema = isSimulatorCommand(pending.type)
      ? simulatorCommandResults[pending.type]
      : commandResults[pending.type];
    const parsed = schema.safeParse(value ?? null);
    if (parsed.success) pending.resolve(parsed.data);
    else
      pending.reject(
        new AppError("device_error", `${pending.type}: the device answered with an invalid result`),
      );
    return true;
  }

  /** An `error` frame answering a command. False when no command waits for this id. */
  fail(id: number, code: string, message: string): boolean {
    const pending = this.#take(id);
    if (!pending) return false;
    pending.reject(
      code === "invalid_argument"
        ? new AppError("invalid_argument", `${pending.type}: ${message}`)
        : new AppError("device_error", `${pending.type}: ${code}: ${message}`),
    );
    return true;
  }

  /** The connection closed: every waiting command fails with `device_offline`. */
  abandon(): void {
    for (const pending of this.#pending.values()) {
      clearTimeout(pending.timer);
      pending.reject(
        new AppError("device_offline", `${pending.type}: the device disconnected before answering`),
      );
    }
    this.#pending.clear();
  }

  #take(id: number): Pending | undefined {
    const pending = this.#pending.get(id);
    if (!pending) return undefined;
    this.#pending.delete(id);
    clearTimeout(pending.timer);
    return pending;
  }
}
