import {
  type Board,
  type CommandType,
  deviceCloseCodes,
  deviceMessageSchemas,
  frameProblems,
  isCustomMessageType,
  jsonProblems,
  jsonTextTooDeep,
  jsonValueProblem,
  maxFrameBytes,
  messageTypeMaxLength,
  protocolVersion,
  type ServerError,
} from "@sdk/protocol";
import { AppError } from "../../errors.ts";
import type { EventBus } from "../../events/bus.ts";
import type { Clock } from "../../lib/clock.ts";
import type { DeviceConnection, DeviceRegistry } from "../../link/registry.ts";
import type { Repositories } from "../../repositories/index.ts";
import type { DeviceLogsService, DeviceRef } from "../device-logs.ts";
import type { DeviceStateService } from "../device-state.ts";
import { issuesLine } from "./command-args.ts";
import { CommandRpc } from "./command-rpc.ts";

/** A device that proved its credentials in the upgrade request. */
export interface DeviceAuth extends DeviceRef {
  board: Board;
  /** In a cluster: the connection's generation (DeviceConnection.generation). */
  generation?: number;
}

/** How a session reaches the socket of its connection. */
export interface Transport {
  send(text: string): void;
  close(code: number, reason: string): void;
}

/** What the socket layer hands a session: frames and the end of the connection. */
export interface LinkSession {
  /** A text frame from the device. */
  receive(text: string): Promise<void>;
  /** A binary frame: the protocol is text only. */
  receiveBinary(): Promise<void>;
  /** A frame over the size limit was refused (the socket closes with 1009). */
  refusedTooBig(): Promise<void>;
  /**
   * The socket closed (any cause). Called at once, not after the frames still waiting: the device
   * is offline promptly; those frames are still handled (stored) afterwards.
   */
  closed(code: number, reason: string): Promise<void>;
  /** Reading the socket was paused because the device sent faster than its frames were handled. */
  backpressure(episode: { pauses: number; frames: number; ms: number }): Promise<void>;
}

/** What the device link is built from; its sessions share all of it. */
export interface LinkDeps {
  repos: Pick<Repositories, "devices">;
  registry: DeviceRegistry;
  bus: EventBus;
  logs: DeviceLogsService;
  state: DeviceStateService;
  clock: Clock;
  heartbeatSeconds: number;
  onError: (error: unknown) => void;
  /**
   * Back-pressure from the scripts: null when the project's scripts can take another message now,
   * else a promise that resolves once they can. The device's frames wait for it (so its socket is
   * read no faster than its project's scripts keep up).
   */
  scriptRoom?: (projectId: string) => Promise<void> | null;
}

/** What every session of a server shares. */
export interface SessionContext extends LinkDeps {
  nextCommandId: () => number;
  /** While the server stops, closing connections must not write to a database that is closing. */
  stopping(): boolean;
  /** The session's socket closed and everything it read has been handled. */
  settled(session: DeviceSession): void;
  /** The connection closed while another instance serves the device: no device.disconnected. */
  released(session: DeviceSession): void;
}

/** The connections that announced their device online (`device.connected`), or took over one that did. */
const announced = new WeakSet<DeviceConnection>();

const helloTimeoutMs = 10_000;
/**
 * `state` and `log` frames whose commit is still pending, per device: the next frames are handled
 * meanwhile (their writes share group commits) until this many wait; then the next frame waits.
 */
const maxFramesInFlight = 64;
const strikeWindowMs = 60_000;
const maxStrikes = 20;

/**
 * One device connection speaking the protocol: frame parsing, hello/welcome, strikes for bad
 * frames, presence (online from hello to close), and routing of what the device reports.
 */
export class DeviceSession implements LinkSession, DeviceConnection {
  readonly deviceId: string;
  readonly projectId: string;
  readonly board: Board;
  readonly generation: number | undefined;
  maxFrame = 0;
  firmware = "";
  readonly #transport: Transport;
  readonly #context: SessionContext;
  // Per connection, so thousands of idle boards cost little: what only some connections need
  // (commands, strikes, writes in flight, entities) is created on first use.
  #rpc: CommandRpc | undefined;
  #strikes: number[] | undefined;
  #helloDone = false;
  #closed = false;
  #helloTimer: NodeJS.Timeout | undefined;
  #hello: Promise<void> | undefined;
  #inFlight: Set<Promise<void>> | undefined;
  /** Calls from the socket layer (frames, the close) not yet finished. */
  #busy = 0;
  #settled = false;
  #settleCheck = false;
  #settledWaiters: (() => void)[] | undefined;
  /** Entities stored through this connection: their next reports need no limit check first. */
  #entities: Set<string> | undefined;

  constructor(auth: DeviceAuth, transport: Transport, context: SessionContext) {
    this.deviceId = auth.deviceId;
    this.projectId = auth.projectId;
    this.board = auth.board;
    this.generation = auth.generation;
    this.#transport = transport;
    this.#context = context;
  }

  /** A device that does not say hello in time is closed. */
  awaitHello(): void {
    this.#helloTimer = setTimeout(() => {
      void this.#system("warn", `no hello within ${helloTimeoutMs / 1000}s: closing`);
      this.close(deviceCloseCodes.misbehaving, "no hello");
    }, helloTimeoutMs);
    this.#helloTimer.unref();
  }

  send(message: object): void {
    if (!this.#closed) this.#transport.send(JSON.stringify(message));
  }

  close(code: number, reason: string): void {
    if (!this.#closed) this.#transport.close(code, reason);
  }

  command(type: CommandType, args: Record<string, unknown>, timeoutMs: number): Promise<unknown> {
    this.#rpc ??= new CommandRpc((frame) => this.#transport.send(frame), this.#context.nextCommandId);
    return this.#rpc.call(type, args, timeoutMs, this.maxFrame);
  }

  #system(level: "info" | "warn" | "error", message: string): Promise<void> {
    return this.#context.logs.append(this, level, "system", message);
  }

  async #reject(code: ServerError["code"], message: string, id?: number): Promise<void> {
    this.send({ type: "error", ...(id ? { id } : {}), code, message });
    await this.#system("warn", `protocol error (${code}): ${message}`);
    const now = this.#context.clock.now();
    this.#strikes = (this.#strikes ?? []).filter((t) => t > now - strikeWindowMs);
    this.#strikes.push(now);
    if (this.#strikes.length >= maxStrikes) {
      await this.#system("error", `${maxStrikes} bad frames within a minute: disconnecting`);
      this.close(deviceCloseCodes.misbehaving, "too many invalid frames");
    }
  }

  receive(text: string): Promise<void> {
    return this.#track(() => this.#receive(text));
  }

  receiveBinary(): Promise<void> {
    return this.#track(() => this.#reject("malformed", frameProblems.binary));
  }

  refusedTooBig(): Promise<void> {
    return this.#track(() =>
      this.#system(
        "error",
        `a frame of ${maxFrameBytes / 1024} KB or more was refused (close ${deviceCloseCodes.tooBig})`,
      ),
    );
  }

  backpressure(episode: { pauses: number; frames: number; ms: number }): Promise<void> {
    return this.#track(() =>
      this.#system(
        "warn",
        `frames arrived faster than they were handled: reading paused ${episode.pauses} time(s), ` +
          `${episode.frames} frames deferred over ${(episode.ms / 1000).toFixed(1)} s (none dropped)`,
      ),
    );
  }

  closed(code: number, reason: string): Promise<void> {
    return this.#track(() => this.#closedNow(code, reason));
  }

  /**
   * Resolves once the socket has closed and every frame it read has been handled (their writes
   * queued or committed): the server waits for this before it closes the database.
   */
  settled(): Promise<void> {
    if (this.#settled) return Promise.resolve();
    this.#settledWaiters ??= [];
    const waiters = this.#settledWaiters;
    return new Promise((resolve) => waiters.push(resolve));
  }

  async #track(work: () => Promise<void>): Promise<void> {
    this.#busy++;
    try {
      await work();
    } finally {
      this.#busy--;
      this.#checkSettled();
    }
  }

  /**
   * The socket layer hands over the next waiting frame within the same turn of the event loop as
   * the previous one finished, so idle at the next turn (after the close) means nothing waits.
   */
  #checkSettled(): void {
    if (this.#settled || this.#settleCheck || !this.#idle()) return;
    this.#settleCheck = true;
    setImmediate(() => {
      this.#settleCheck = false;
      if (this.#settled || !this.#idle()) return;
      this.#settled = true;
      this.#context.settled(this);
      for (const resolve of this.#settledWaiters?.splice(0) ?? []) resolve();
    });
  }

  #idle(): boolean {
    return this.#closed && this.#busy === 0 && !this.#inFlight?.size;
  }

  async #receive(text: string): Promise<void> {
    // Depth first: nothing recursive (zod, JSON.stringify, a script) may ever see a deeper value.
    if (jsonTextTooDeep(text)) return this.#reject("malformed", `the frame ${jsonProblems.tooDeep}`);
    let message: unknown;
    try {
      message = JSON.parse(text);
    } catch {
      return this.#reject("malformed", frameProblems.notJson);
    }
    if (typeof message !== "object" || message === null || Array.isArray(message)) {
      return this.#reject("malformed", frameProblems.notObject);
    }
    const problem = jsonValueProblem(message);
    const type = (message as { type?: unknown }).type;
    const rawId = (message as { id?: unknown }).id;
    const id = Number.isSafeInteger(rawId) && (rawId as number) > 0 ? (rawId as number) : undefined;
    if (typeof type !== "string") return this.#reject("malformed", frameProblems.noType, id);
    if (problem) return this.#reject("invalid_message", problem, id);
    const known = Object.hasOwn(deviceMessageSchemas, type);
    if (!known && !isCustomMessageType(type)) {
      const shown = JSON.stringify(type.slice(0, messageTypeMaxLength));
      return this.#reject("unknown_type", `unknown message type ${shown}`, id);
    }
    if (!this.#helloDone && type !== "hello") return this.#reject("not_ready", frameProblems.helloFirst, id);

    if (!known) return this.#route(message as { type: string } & Record<string, unknown>);
    const schema = deviceMessageSchemas[type as keyof typeof deviceMessageSchemas];
    const parsed = schema.safeParse(message);
    if (!parsed.success)
      return this.#reject("invalid_message", `${type}: ${issuesLine(parsed.error, message)}`, id);
    const msg = parsed.data;
    switch (msg.type) {
      case "hello": {
        const hello = this.#sayHello(msg);
        this.#hello = hello;
        try {
          await hello;
        } finally {
          // Done: a close no longer waits for it (and the connection does not keep it).
          if (this.#hello === hello) this.#hello = undefined;
        }
        return;
      }
      case "result":
        if (!this.#rpc?.settle(msg.id, msg.value))
          await this.#system("warn", `result for unknown command ${msg.id}`);
        return;
      case "error":
        if (msg.id === undefined) return this.#system("error", `device error ${msg.code}: ${msg.message}`);
        if (!this.#rpc?.fail(msg.id, msg.code, msg.message)) {
          await this.#system("warn", `error for unknown command ${msg.id}: ${msg.message}`);
        }
        return;
      case "log":
        return this.#pipeline(this.#context.logs.append(this, msg.level, "device", msg.message));
      case "state": {
        const recorded = this.#context.state.record(this, msg.entityId, msg.value).then(
          () => {
            this.#entities ??= new Set();
            this.#entities.add(msg.entityId);
          },
          (error: unknown) => {
            if (error instanceof AppError) return this.#reject("invalid_message", error.message, id);
            throw error;
          },
        );
        // A new entity waits for its commit, so the per-device entity limit is checked in order.
        if (!this.#entities?.has(msg.entityId)) return recorded;
        return this.#pipeline(recorded);
      }
      default:
        return this.#route(msg as { type: string } & Record<string, unknown>);
    }
  }

  /** Lets the next frame be handled while this write commits, up to `maxFramesInFlight`. */
  async #pipeline(write: Promise<void>): Promise<void> {
    this.#inFlight ??= new Set();
    const inFlight = this.#inFlight;
    const tracked: Promise<void> = write
      .catch((error: unknown) => this.#context.onError(error))
      .finally(() => {
        inFlight.delete(tracked);
        this.#checkSettled();
      });
    inFlight.add(tracked);
    while (inFlight.size >= maxFramesInFlight) await Promise.race(inFlight);
  }

  #route(message: { type: string } & Record<string, unknown>): Promise<void> | undefined {
    void this.#context.bus.publish("device.message", {
      projectId: this.projectId,
      deviceId: this.deviceId,
      at: this.#context.clock.now(),
      message,
    });
    return this.#context.scriptRoom?.(this.projectId) ?? undefined;
  }

  async #sayHello(hello: {
    firmware: string;
    board: Board;
    maxFrame: number;
    protocol: number;
  }): Promise<void> {
    if (this.#helloDone) return this.#reject("invalid_message", "hello was already received");
    if (this.#closed) return; // read before the close: the connection is gone, the device stays offline
    const { repos, registry, bus, clock } = this.#context;
    if (hello.protocol > protocolVersion) {
      await this.#system(
        "warn",
        `device speaks protocol ${hello.protocol}; this server speaks ${protocolVersion}`,
      );
    }
    clearTimeout(this.#helloTimer);
    this.#helloTimer = undefined;
    if (this.#closed) return;
    this.#helloDone = true;
    this.maxFrame = hello.maxFrame;
    this.firmware = hello.firmware;
    // In a cluster, a newer connection of the device may be here already (this hello was slow).
    const here = registry.get(this.deviceId)?.generation;
    if (this.generation !== undefined && here !== undefined && here > this.generation) return this.#stale();
    const previous = registry.register(this);
    if (previous) {
      previous.close(deviceCloseCodes.replaced, "replaced by a new connection");
      await this.#system("warn", "a new connection with the same credentials replaced the previous one");
    }
    const now = clock.now();
    // Queued together (one group commit, not one after another): presence, then the log lines.
    const presence = repos.devices.setPresence(this.deviceId, {
      status: "online",
      lastSeenAt: now,
      firmwareVersion: hello.firmware,
      instanceId: registry.instanceId,
      ...(this.generation === undefined ? {} : { generation: this.generation }),
    });
    const writes: Promise<unknown>[] = [presence];
    if (hello.board !== this.board) {
      writes.push(
        this.#system("warn", `the device reports board ${hello.board} but is registered as ${this.board}`),
      );
    }
    writes.push(this.#system("info", `connected (firmware ${hello.firmware}, ${hello.board})`));
    await Promise.all(writes);
    // Not applied (a cluster): a newer connection of the device authenticated meanwhile.
    if (!(await presence)) {
      registry.unregister(this);
      return this.#stale();
    }
    // Now that it holds the device: an instance serving it with an older connection lets it go.
    registry.claim(this);
    // Let go meanwhile (a newer connection on another instance claimed it): its socket is closing.
    // (Replaced by a newer connection here, it still announces the device, as that one does not.)
    if (registry.get(this.deviceId) === undefined) return;
    this.send({
      type: "welcome",
      protocol: protocolVersion,
      deviceId: this.deviceId,
      serverTime: new Date(now).toISOString(),
      heartbeatSeconds: this.#context.heartbeatSeconds,
    });
    // A replaced connection here had announced the device already, unless its hello was stale.
    const known = previous !== undefined && announced.has(previous);
    announced.add(this);
    if (!known) {
      void bus.publish("device.connected", {
        projectId: this.projectId,
        deviceId: this.deviceId,
        at: now,
        board: this.board,
        firmware: hello.firmware,
      });
    }
  }

  /**
   * A cluster: a newer connection of the device exists (on any instance), so this one, whose hello
   * came late, neither serves it nor takes it offline: it closes as a replaced connection would.
   */
  async #stale(): Promise<void> {
    this.close(deviceCloseCodes.replaced, "replaced by a newer connection");
    await this.#system(
      "warn",
      "a newer connection with the same credentials replaced this one before its hello",
    );
  }

  async #closedNow(code: number, reason: string): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearTimeout(this.#helloTimer);
    this.#helloTimer = undefined;
    this.#rpc?.abandon();
    // A hello under way registers and marks online first; the offline below must come after it.
    await this.#hello?.catch(() => undefined);
    const { repos, registry, bus, clock, onError } = this.#context;
    if (!registry.unregister(this)) return; // replaced by a newer connection, which keeps it online
    if (this.#context.stopping()) return; // every device starts offline at the next boot
    const now = clock.now();
    const why = reason || closeReason(code);
    // Queued together: the log entry and the presence change share one commit.
    void this.#system(
      code === deviceCloseCodes.normal ? "info" : "warn",
      `disconnected (${code}${why ? `: ${why}` : ""})`,
    );
    try {
      // Where this instance (still) serves it: another instance that took it over before this one
      // heard of it keeps it online, and no one is told it went offline.
      const applied = await repos.devices.setPresence(this.deviceId, {
        status: "offline",
        lastSeenAt: now,
        instanceId: registry.instanceId,
      });
      if (!applied) return this.#context.released(this);
    } catch (error) {
      onError(error);
    }
    void bus.publish("device.disconnected", {
      projectId: this.projectId,
      deviceId: this.deviceId,
      at: now,
      reason: why,
    });
  }
}

function closeReason(code: number): string {
  switch (code) {
    case deviceCloseCodes.normal:
      return "closed by the device";
    case deviceCloseCodes.goingAway:
      return "going away";
    case deviceCloseCodes.serviceRestart:
      return "service restart";
    case 1006: // never sent: the connection ended without a close frame
      return "connection lost";
    case deviceCloseCodes.tooBig:
      return "frame too big";
    case deviceCloseCodes.misbehaving:
      return "misbehaving";
    default:
      return "";
  }
}
