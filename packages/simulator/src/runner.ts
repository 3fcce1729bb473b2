import { type Board, type CommandType, isSimulatorCommand, maxFrameBytes } from "@sdk/protocol";
import { execute, isCommandType, parseArgs } from "./commands.ts";
import { CommandError } from "./errors.ts";
import type { Hardware, HardwareEvent } from "./hardware/index.ts";
import { simulatorCommand } from "./simulator-commands.ts";
import { type CommandRecord, type DeviceMessage, noReply } from "./types.ts";

/** Replaces what a command does, after its arguments were validated (see SimulatedDevice.handle). */
export type Override = (args: never) => unknown;

export interface RunnerDeps {
  board: Board;
  hardware: Hardware;
  now: () => number;
  historyLimit: number;
  send: (message: DeviceMessage) => boolean;
  /** A command was answered (or held by an override): the device emits `command`. */
  done: (record: CommandRecord) => void;
}

function isValidId(id: unknown): id is number {
  return typeof id === "number" && Number.isInteger(id) && id >= 1 && id <= 2 ** 31 - 1;
}

/**
 * Receives commands: records each one, validates it, runs it on the hardware (or an override),
 * and answers with `result` or `error`. Events the hardware raises meanwhile follow the answer.
 */
export class CommandRunner {
  readonly records: CommandRecord[] = [];
  readonly overrides = new Map<string, Override>();
  readonly #deps: RunnerDeps;
  #outbox: HardwareEvent[] | null = null;

  constructor(deps: RunnerDeps) {
    this.#deps = deps;
  }

  /** A frame with a `type` that is not welcome or error: a command, or something to refuse. */
  receive(type: string, id: unknown, args: Record<string, unknown>): void {
    const record: CommandRecord = {
      id: isValidId(id) ? id : null,
      type,
      args,
      at: this.#deps.now(),
      reply: null,
    };
    this.records.push(record);
    if (this.records.length > this.#deps.historyLimit) this.records.shift();
    if (record.id !== null && isCommandType(type)) {
      this.#run(record, () => this.#execute(type, record.args));
      return;
    }
    if (record.id !== null && isSimulatorCommand(type)) {
      this.#run(record, () => simulatorCommand(this.#deps.hardware, type, record.args));
      return;
    }
    if (record.id === null) {
      this.#answer(record, {
        error: { code: "malformed", message: `${type}: \`id\` must be an integer 1–2147483647` },
      });
    } else {
      this.#answer(record, {
        error: { code: "unsupported", message: `unknown command ${JSON.stringify(type)}` },
      });
    }
    this.#deps.done(record);
  }

  /** gpio_change / uart_rx from the hardware: sent now, or after the reply of the running command. */
  hardwareEvent(event: HardwareEvent): void {
    if (this.#outbox) this.#outbox.push(event);
    else this.#deps.send(event);
  }

  sendError(id: number | undefined, code: string, message: string): void {
    this.#deps.send({
      type: "error",
      ...(id === undefined ? {} : { id }),
      code,
      message: message.slice(0, 1024),
    });
  }

  #execute(type: CommandType, raw: Record<string, unknown>): unknown {
    const { board, hardware } = this.#deps;
    const args = parseArgs(board, type, raw);
    const override = this.overrides.get(type);
    return override ? override(args as never) : execute(hardware, type, args);
  }

  #run(record: CommandRecord, exec: () => unknown): void {
    this.#outbox = [];
    let pending: Promise<unknown> | null = null;
    try {
      const value = exec();
      if (value instanceof Promise) pending = value;
      else if (value !== noReply) this.#answer(record, { value });
    } catch (error) {
      this.#answer(record, { error: errorReply(error) });
    }
    const outbox = this.#outbox;
    this.#outbox = null;
    for (const event of outbox) this.hardwareEvent(event);
    if (!pending) {
      this.#deps.done(record);
      return;
    }
    pending.then(
      (value) => {
        if (value !== noReply) this.#answer(record, { value });
        this.#deps.done(record);
      },
      (error: unknown) => {
        this.#answer(record, { error: errorReply(error) });
        this.#deps.done(record);
      },
    );
  }

  #answer(record: CommandRecord, reply: NonNullable<CommandRecord["reply"]>): void {
    const id = record.id ?? undefined;
    if ("value" in reply) {
      const result = { type: "result", id, value: reply.value ?? null };
      const bytes = Buffer.byteLength(JSON.stringify(result));
      if (bytes < maxFrameBytes) {
        record.reply = { value: result.value };
        this.#deps.send(result);
        return;
      }
      reply = {
        error: {
          code: "unsupported",
          message: `the result would be a ${bytes}-byte frame; frames must be under ${maxFrameBytes} bytes`,
        },
      };
    }
    record.reply = reply;
    this.sendError(id, reply.error.code, reply.error.message);
  }
}

function errorReply(error: unknown): { code: string; message: string } {
  if (error instanceof CommandError) return { code: error.code, message: error.message };
  return { code: "io_error", message: error instanceof Error ? error.message : String(error) };
}
