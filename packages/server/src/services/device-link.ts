import { timingSafeEqual } from "node:crypto";
import {
  type Board,
  type CommandType,
  commandResults,
  commandSchemas,
  commandTypes,
  customTypePattern,
  deviceCloseCodes,
  deviceMessageSchemas,
  protocolVersion,
  type ServerError,
} from "@sdk/protocol";
import { AppError } from "../errors.ts";
import type { EventBus } from "../events/bus.ts";
import type { Clock } from "../lib/clock.ts";
import { hashSecret } from "../lib/tokens.ts";
import type { DeviceConnection, DeviceRegistry } from "../link/registry.ts";
import type { Repositories } from "../repositories/index.ts";
import type { Principal } from "./auth.ts";
import { type DeviceLogsService, type DeviceRef, requireVisibleDevice } from "./device-logs.ts";
import type { DeviceStateService } from "./device-state.ts";

/** A device that proved its credentials in the upgrade request. */
export interface DeviceAuth extends DeviceRef {
  board: Board;
}

/** How the service reaches the socket of one connection. */
export interface Transport {
  send(text: string): void;
  close(code: number, reason: string): void;
}

/** Device events a script handles (`onMessage`): gpio_change, uart_rx and custom types. */
export type DeviceMessageListener = (
  device: DeviceAuth,
  message: { type: string } & Record<string, unknown>,
) => void;
export type ConnectionListener = (device: DeviceAuth, connected: boolean) => void;

const helloTimeoutMs = 10_000;
const strikeWindowMs = 60_000;
const maxStrikes = 20;
const reservedTypes = new Set<string>([...commandTypes, "welcome"]);

interface Pending {
  type: CommandType;
  resolve(value: unknown): void;
  reject(error: AppError): void;
  timer: NodeJS.Timeout;
}

export interface LinkSession {
  /** A text frame from the device. */
  receive(text: string): Promise<void>;
  /** A binary frame: the protocol is text only. */
  receiveBinary(): Promise<void>;
  /** A frame over the size limit was refused (the socket closes with 1009). */
  refusedTooBig(): Promise<void>;
  /** The socket closed (any cause). */
  closed(code: number, reason: string): Promise<void>;
}

export interface DeviceLinkDeps {
  repos: Pick<Repositories, "devices">;
  registry: DeviceRegistry;
  bus: EventBus;
  logs: DeviceLogsService;
  state: DeviceStateService;
  clock: Clock;
  heartbeatSeconds: number;
  commandTimeoutSeconds: number;
  onError: (error: unknown) => void;
}

function describeIssues(error: { issues: { path: PropertyKey[]; message: string }[] }): string {
  return error.issues.map((i) => `${i.path.map(String).join(".") || "message"}: ${i.message}`).join("; ");
}

/**
 * The rules of the device protocol: authentication, hello/welcome, presence, routing of device
 * messages, and commands with their replies and timeouts. The socket layer only moves frames.
 */
export function deviceLinkService(deps: DeviceLinkDeps) {
  const { repos, registry, bus, logs, state, clock, onError } = deps;
  const messageListeners = new Set<DeviceMessageListener>();
  const connectionListeners = new Set<ConnectionListener>();
  let nextCommandId = 0;
  /** While the server stops, closing connections must not write to a database that is closing. */
  let shuttingDown = false;

  const system = (device: DeviceRef, level: "info" | "warn" | "error", message: string) =>
    logs.append(device, level, "system", message);

  class Session implements LinkSession, DeviceConnection {
    readonly deviceId: string;
    readonly projectId: string;
    readonly board: Board;
    maxFrame = 0;
    firmware = "";
    readonly #auth: DeviceAuth;
    readonly #transport: Transport;
    readonly #pending = new Map<number, Pending>();
    #strikes: number[] = [];
    #helloDone = false;
    #closed = false;
    readonly #helloTimer: NodeJS.Timeout;

    constructor(auth: DeviceAuth, transport: Transport) {
      this.#auth = auth;
      this.deviceId = auth.deviceId;
      this.projectId = auth.projectId;
      this.board = auth.board;
      this.#transport = transport;
      this.#helloTimer = setTimeout(() => {
        void system(this.#auth, "warn", `no hello within ${helloTimeoutMs / 1000}s: closing`);
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

    async #reject(code: ServerError["code"], message: string, id?: number): Promise<void> {
      this.send({ type: "error", ...(id ? { id } : {}), code, message });
      await system(this.#auth, "warn", `protocol error (${code}): ${message}`);
      const now = clock.now();
      this.#strikes = this.#strikes.filter((t) => t > now - strikeWindowMs);
      this.#strikes.push(now);
      if (this.#strikes.length >= maxStrikes) {
        await system(this.#auth, "error", `${maxStrikes} bad frames within a minute: disconnecting`);
        this.close(deviceCloseCodes.misbehaving, "too many invalid frames");
      }
    }

    async receive(text: string): Promise<void> {
      let message: unknown;
      try {
        message = JSON.parse(text);
      } catch {
        return this.#reject("malformed", "the frame is not valid JSON");
      }
      if (typeof message !== "object" || message === null || Array.isArray(message)) {
        return this.#reject("malformed", "a frame must be a JSON object");
      }
      const type = (message as { type?: unknown }).type;
      const rawId = (message as { id?: unknown }).id;
      const id = Number.isSafeInteger(rawId) && (rawId as number) > 0 ? (rawId as number) : undefined;
      if (typeof type !== "string") return this.#reject("malformed", "a frame must have a string `type`", id);
      const known = Object.hasOwn(deviceMessageSchemas, type);
      if (reservedTypes.has(type) || (!known && !customTypePattern.test(type))) {
        return this.#reject("unknown_type", `unknown message type ${JSON.stringify(type.slice(0, 64))}`, id);
      }
      if (!this.#helloDone && type !== "hello") return this.#reject("not_ready", "send hello first", id);

      if (!known) return this.#route(message as { type: string } & Record<string, unknown>);
      const schema = deviceMessageSchemas[type as keyof typeof deviceMessageSchemas];
      const parsed = schema.safeParse(message);
      if (!parsed.success)
        return this.#reject("invalid_message", `${type}: ${describeIssues(parsed.error)}`, id);
      const msg = parsed.data;
      switch (msg.type) {
        case "hello":
          return this.#hello(msg);
        case "result":
          return this.#settle(msg.id, msg.value);
        case "error":
          if (msg.id !== undefined) return this.#fail(msg.id, msg.code, msg.message);
          return system(this.#auth, "error", `device error ${msg.code}: ${msg.message}`);
        case "log":
          void logs.append(this.#auth, msg.level, "device", msg.message); // stored with the next group commit
          return;
        case "state":
          try {
            await state.record(this.#auth, msg.entityId, msg.value);
          } catch (error) {
            if (error instanceof AppError) return this.#reject("invalid_message", error.message, id);
            throw error;
          }
          return;
        default:
          return this.#route(msg as { type: string } & Record<string, unknown>);
      }
    }

    #route(message: { type: string } & Record<string, unknown>): void {
      for (const listener of messageListeners) {
        try {
          listener(this.#auth, message);
        } catch (error) {
          onError(error);
        }
      }
    }

    async #hello(hello: {
      firmware: string;
      board: Board;
      maxFrame: number;
      protocol: number;
    }): Promise<void> {
      if (this.#helloDone) return this.#reject("invalid_message", "hello was already received");
      if (hello.protocol > protocolVersion) {
        await system(
          this.#auth,
          "warn",
          `device speaks protocol ${hello.protocol}; this server speaks ${protocolVersion}`,
        );
      }
      clearTimeout(this.#helloTimer);
      this.#helloDone = true;
      this.maxFrame = hello.maxFrame;
      this.firmware = hello.firmware;
      const previous = registry.register(this);
      if (previous) {
        previous.close(deviceCloseCodes.replaced, "replaced by a new connection");
        await system(
          this.#auth,
          "warn",
          "a new connection with the same credentials replaced the previous one",
        );
      }
      const now = clock.now();
      await repos.devices.setPresence(this.deviceId, {
        status: "online",
        lastSeenAt: now,
        firmwareVersion: hello.firmware,
      });
      if (hello.board !== this.board) {
        await system(
          this.#auth,
          "warn",
          `the device reports board ${hello.board} but is registered as ${this.board}`,
        );
      }
      await system(this.#auth, "info", `connected (firmware ${hello.firmware}, ${hello.board})`);
      this.send({
        type: "welcome",
        protocol: protocolVersion,
        deviceId: this.deviceId,
        serverTime: new Date(now).toISOString(),
        heartbeatSeconds: deps.heartbeatSeconds,
      });
      if (!previous) {
        bus.publish({ kind: "status", ...this.#auth, at: now, status: "online" });
        for (const listener of connectionListeners) listener(this.#auth, true);
      }
    }

    #settle(id: number, value: unknown): void {
      const pending = this.#pending.get(id);
      if (!pending) return void system(this.#auth, "warn", `result for unknown command ${id}`);
      this.#pending.delete(id);
      clearTimeout(pending.timer);
      const parsed = commandResults[pending.type].safeParse(value ?? null);
      if (parsed.success) pending.resolve(parsed.data);
      else
        pending.reject(
          new AppError("device_error", `${pending.type}: the device answered with an invalid result`),
        );
    }

    #fail(id: number, code: string, message: string): void {
      const pending = this.#pending.get(id);
      if (!pending) return void system(this.#auth, "warn", `error for unknown command ${id}: ${message}`);
      this.#pending.delete(id);
      clearTimeout(pending.timer);
      pending.reject(
        code === "invalid_argument"
          ? new AppError("invalid_argument", `${pending.type}: ${message}`)
          : new AppError("device_error", `${pending.type}: ${code}: ${message}`),
      );
    }

    command(type: CommandType, args: Record<string, unknown>, timeoutMs: number): Promise<unknown> {
      nextCommandId = (nextCommandId % 2_000_000_000) + 1;
      const id = nextCommandId;
      const frame = JSON.stringify({ ...args, type, id });
      if (Buffer.byteLength(frame) > this.maxFrame) {
        throw new AppError(
          "invalid_argument",
          `${type} is ${Buffer.byteLength(frame)} bytes; this device accepts at most ${this.maxFrame}`,
        );
      }
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          this.#pending.delete(id);
          reject(new AppError("device_timeout", `${type}: no answer within ${timeoutMs / 1000}s`));
        }, timeoutMs);
        this.#pending.set(id, { type, resolve, reject, timer });
        this.#transport.send(frame);
      });
    }

    async receiveBinary(): Promise<void> {
      return this.#reject("malformed", "binary frames are not part of the protocol: send JSON text");
    }

    async refusedTooBig(): Promise<void> {
      await system(this.#auth, "error", "a frame of 64 KB or more was refused (close 1009)");
    }

    async closed(code: number, reason: string): Promise<void> {
      if (this.#closed) return;
      this.#closed = true;
      clearTimeout(this.#helloTimer);
      for (const pending of this.#pending.values()) {
        clearTimeout(pending.timer);
        pending.reject(
          new AppError("device_offline", `${pending.type}: the device disconnected before answering`),
        );
      }
      this.#pending.clear();
      if (!registry.unregister(this)) return; // replaced by a newer connection, which keeps it online
      if (shuttingDown) return; // every device starts offline at the next boot
      const now = clock.now();
      const why = reason || closeReason(code);
      // Queued together: the log entry and the presence change share one commit.
      void system(
        this.#auth,
        code === 1000 ? "info" : "warn",
        `disconnected (${code}${why ? `: ${why}` : ""})`,
      );
      try {
        await repos.devices.setPresence(this.deviceId, { status: "offline", lastSeenAt: now });
      } catch (error) {
        onError(error);
      }
      bus.publish({ kind: "status", ...this.#auth, at: now, status: "offline", reason: why });
      for (const listener of connectionListeners) listener(this.#auth, false);
    }
  }

  // Rotated credentials or a deleted device end the live connection.
  bus.subscribeAll((event) => {
    if (event.kind !== "revoked") return;
    registry.get(event.deviceId)?.close(deviceCloseCodes.revoked, event.reason);
  });

  return {
    /** Checks a device id and secret; the same error for an unknown id and a wrong secret. */
    async authenticate(deviceId: string, secret: string): Promise<DeviceAuth> {
      const device = await repos.devices.findForAuth(deviceId);
      const expected = Buffer.from(device?.secretHash ?? "0".repeat(64), "hex");
      const actual = Buffer.from(hashSecret(secret), "hex");
      if (!device || !timingSafeEqual(expected, actual)) throw new AppError("invalid_device_credentials");
      return { deviceId: device.id, projectId: device.projectId, board: device.board };
    },

    open(auth: DeviceAuth, transport: Transport): LinkSession {
      return new Session(auth, transport);
    },

    isOnline: (deviceId: string) => registry.get(deviceId) !== undefined,

    /** Sends a command to a connected device and resolves with its result. */
    async command(device: DeviceRef, type: string, args: Record<string, unknown>): Promise<unknown> {
      if (!Object.hasOwn(commandSchemas, type)) {
        throw new AppError(
          "invalid_argument",
          `unknown command ${JSON.stringify(type)}; commands: ${commandTypes.join(", ")}`,
        );
      }
      const parsed = commandSchemas[type as CommandType].safeParse(args);
      if (!parsed.success) throw new AppError("invalid_argument", `${type}: ${describeIssues(parsed.error)}`);
      const connection = registry.get(device.deviceId);
      if (!(connection instanceof Session) || connection.projectId !== device.projectId) {
        throw new AppError("device_offline");
      }
      return connection.command(
        type as CommandType,
        parsed.data as Record<string, unknown>,
        deps.commandTimeoutSeconds * 1000,
      );
    },

    /** A command on behalf of a user: 404 unless they may see the device. */
    async commandAs(principal: Principal, device: DeviceRef, type: string, args: Record<string, unknown>) {
      await requireVisibleDevice(repos, principal, device);
      return this.command(device, type, args);
    },

    /** A raw typed message for the device (scripts' `DEVICE.send`); nothing waits for an answer. */
    sendRaw(device: DeviceRef, message: Record<string, unknown>): void {
      const connection = registry.get(device.deviceId);
      if (!connection || connection.projectId !== device.projectId) throw new AppError("device_offline");
      if (Buffer.byteLength(JSON.stringify(message)) > connection.maxFrame) {
        throw new AppError(
          "invalid_argument",
          `the message is larger than this device accepts (${connection.maxFrame} bytes)`,
        );
      }
      connection.send(message);
    },

    onMessage(listener: DeviceMessageListener): () => void {
      messageListeners.add(listener);
      return () => messageListeners.delete(listener);
    },

    onConnection(listener: ConnectionListener): () => void {
      connectionListeners.add(listener);
      return () => connectionListeners.delete(listener);
    },

    /** Server shutdown: close every device connection with "going away". */
    shutDown(): void {
      shuttingDown = true;
      for (const connection of [...registry.all()])
        connection.close(deviceCloseCodes.goingAway, "server shutting down");
    },

    markAllOffline: () => repos.devices.markAllOffline(),
  };
}
export type DeviceLinkService = ReturnType<typeof deviceLinkService>;

function closeReason(code: number): string {
  switch (code) {
    case 1000:
      return "closed by the device";
    case 1001:
      return "going away";
    case 1006:
      return "connection lost";
    case 1009:
      return "frame too big";
    case deviceCloseCodes.misbehaving:
      return "misbehaving";
    default:
      return "";
  }
}
