import { type Board, deviceSocketUrl, Hello, maxFrameBytes, protocolVersion, Welcome } from "@sdk/protocol";
import { defaultReconnect } from "./backoff.ts";
import { Connection } from "./connection.ts";
import type { HardwareEvent } from "./hardware/index.ts";
import { CommandRunner, type Override } from "./runner.ts";
import type {
  CommandRecord,
  DeviceEvents,
  DeviceMessage,
  LinkState,
  SimulatedDeviceOptions,
} from "./types.ts";
import { simulatorVersion } from "./version.ts";

type Emit = <E extends keyof DeviceEvents>(event: E, payload: DeviceEvents[E]) => void;

export interface SessionDeps {
  options: SimulatedDeviceOptions;
  hardware: ConstructorParameters<typeof CommandRunner>[0]["hardware"];
  now: () => number;
  historyLimit: number;
  emit: Emit;
}

function helloFor(options: SimulatedDeviceOptions): Hello {
  return {
    type: "hello",
    protocol: options.protocol ?? protocolVersion,
    firmware: options.firmware ?? `sim-${simulatorVersion}`,
    board: options.board ?? "pico_w",
    maxFrame: options.maxFrame ?? maxFrameBytes - 1,
  };
}

/** Throws a RangeError for options that would make an invalid hello or credentials (before anything is built). */
export function checkOptions(options: SimulatedDeviceOptions): void {
  const hello = Hello.safeParse(helloFor(options));
  if (!hello.success) {
    const issue = hello.error.issues[0]!;
    throw new RangeError(`invalid device options: ${issue.path.join(".")}: ${issue.message}`);
  }
  if (!options.deviceId || options.deviceId.includes(":")) {
    throw new RangeError('invalid device options: deviceId must be non-empty and without ":"');
  }
}

/**
 * The device's side of the protocol over one Connection: hello on open, welcome and the
 * heartbeat watchdog, frames in (commands to the runner, server errors surfaced), frames out.
 */
export class DeviceSession {
  readonly board: Board;
  readonly firmware: string;
  readonly url: string;
  readonly #options: SimulatedDeviceOptions;
  readonly #emit: Emit;
  readonly #connection: Connection;
  readonly #runner: CommandRunner;
  #status: LinkState = "stopped";
  #welcome: Welcome | null = null;

  constructor(deps: SessionDeps) {
    const { options, emit } = deps;
    this.#options = options;
    this.#emit = emit;
    this.board = options.board ?? "pico_w";
    this.firmware = options.firmware ?? `sim-${simulatorVersion}`;
    this.url = deviceSocketUrl(options.server);
    this.#runner = new CommandRunner({
      board: this.board,
      hardware: deps.hardware,
      now: deps.now,
      historyLimit: deps.historyLimit,
      send: (message) => this.send(message),
      done: (record) => emit("command", record),
    });
    const reconnect =
      options.reconnect === false ? false : { ...defaultReconnect, ...(options.reconnect ?? {}) };
    this.#connection = new Connection(
      {
        url: this.url,
        deviceId: options.deviceId,
        secret: options.secret,
        maxPayload: options.maxFrame ?? maxFrameBytes - 1,
        reconnect,
        handshakeTimeoutMs: options.handshakeTimeoutMs ?? 10_000,
        now: deps.now,
      },
      {
        connecting: (attempt, url) => {
          this.#status = "connecting";
          emit("connecting", { attempt, url });
        },
        open: () => this.#opened(),
        text: (text) => this.#receive(text),
        binary: () => this.#sendError("malformed", "binary frames are not part of the protocol"),
        closed: (code, reason) => {
          this.#welcome = null;
          this.#status = "waiting";
          emit("disconnected", { code, reason });
        },
        authFailed: (failure) => {
          emit("authFailed", failure);
          emit("error", Object.assign(new Error(failure.message), { code: failure.code }));
        },
        error: (error) => emit("error", error),
        retry: (attempt, delayMs) => {
          this.#status = "waiting";
          emit("reconnecting", { attempt, delayMs });
        },
        ignored: (what) => emit("ignored", { what }),
        idle: () => {
          this.#status = "stopped";
          emit("idle", {});
        },
      },
    );
  }

  get status(): LinkState {
    return this.#status;
  }

  get welcome(): Welcome | null {
    return this.#welcome;
  }

  get connection(): Connection {
    return this.#connection;
  }

  get records(): CommandRecord[] {
    return this.#runner.records;
  }

  get overrides(): Map<string, Override> {
    return this.#runner.overrides;
  }

  /** gpio_change / uart_rx from the hardware (after the answer of the command that caused it). */
  hardwareEvent(event: HardwareEvent): void {
    this.#runner.hardwareEvent(event);
  }

  /** Sends a message; false when offline. */
  send(message: DeviceMessage): boolean {
    const sent = this.#connection.send(JSON.stringify(message));
    if (sent) this.#emit("sent", message);
    return sent;
  }

  #opened(): void {
    this.#status = "handshaking";
    this.#emit("open", { url: this.url });
    if (this.#options.sendHello !== false) this.send(this.#hello());
    this.#connection.setWatchdog(this.#options.welcomeTimeoutMs ?? 15_000);
  }

  #hello(): Hello {
    return helloFor(this.#options);
  }

  #receive(text: string): void {
    const problem = (message: string) => this.#sendError("malformed", message);
    let frame: unknown;
    try {
      frame = JSON.parse(text);
    } catch {
      problem("the frame is not valid JSON");
      return;
    }
    if (typeof frame !== "object" || frame === null || Array.isArray(frame)) {
      problem("a frame must be a JSON object");
      return;
    }
    const { type, id, ...args } = frame as Record<string, unknown>;
    if (typeof type !== "string") {
      problem("a frame must have a string `type`");
      return;
    }
    if (type === "welcome") {
      this.#welcomed(frame);
      return;
    }
    if (type === "error") {
      const { code, message } = args;
      this.#emit("serverError", {
        code: String(code),
        message: String(message),
        ...(typeof id === "number" ? { id } : {}),
      });
      return;
    }
    this.#runner.receive(type, id, args);
  }

  #welcomed(frame: object): void {
    const parsed = Welcome.safeParse(frame);
    if (!parsed.success) {
      this.#emit("error", new Error("the server sent an invalid welcome"));
      this.#sendError("malformed", "welcome: unexpected shape");
      return;
    }
    this.#welcome = parsed.data;
    this.#status = "connected";
    const timeout = this.#options.heartbeatTimeoutMs;
    this.#connection.setWatchdog(
      timeout === false ? 0 : (timeout ?? Math.max(0, parsed.data.heartbeatSeconds) * 2_500),
    );
    this.#emit("connected", parsed.data);
  }

  #sendError(code: string, message: string): void {
    this.#runner.sendError(undefined, code, message);
  }
}
