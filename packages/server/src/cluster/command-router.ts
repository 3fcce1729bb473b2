import { type ErrorCode, errorCatalog } from "@sdk/protocol";
import { AppError } from "../errors.ts";
import {
  type CommandRouter,
  LocalCommandRouter,
  type RoutedDevice,
  type RoutedHandler,
  type RoutedRequest,
} from "../link/command-router.ts";
import type { DeviceRegistry } from "../link/registry.ts";
import {
  ClosedConnectionError,
  DrainingConnectionError,
  type Msg,
  type NatsConnection,
  NatsLink,
  RequestError,
  type Subscription,
  timedOut,
} from "./nats.ts";

/** A routed request as it travels to the owner. */
interface Routed {
  device: RoutedDevice;
  request: RoutedRequest;
  /** When the sender stops waiting (ms since the epoch): past it the owner does not run the request. */
  deadline: number;
}

/** The owner's answer: the handler's value, or its error's code and message. */
type Reply =
  | { ok: true; value: unknown }
  | {
      ok: false;
      code: ErrorCode;
      message: string;
      extra?: ConstructorParameters<typeof AppError>[2];
    };

/**
 * The command router of a cluster instance (docs/scaling.md). A request for a device this instance
 * serves runs here; for a device another instance serves, it goes to that instance over NATS
 * request/reply (`<cluster>.inst.<id>.route`), which runs it with its own handler and sends back
 * the value or the AppError's code and message, thrown here again as the same AppError. A device
 * no instance serves, or whose instance does not answer the request, is handled here: the handler
 * answers `device_offline`.
 *
 * While NATS is unreachable a request for another instance's device is refused at once
 * (`device_offline`, saying why). The request carries its deadline: an owner that receives it too
 * late answers `device_timeout` without running it (the two instances' clocks are compared: keep
 * them synchronised with NTP).
 */
export class NatsCommandRouter implements CommandRouter {
  readonly #nc: NatsConnection;
  readonly #link: NatsLink;
  readonly #registry: DeviceRegistry;
  readonly #subject: (instanceId: string) => string;
  readonly #timeoutMs: number;
  readonly #onError: (error: unknown) => void;
  /** Runs the requests for the devices this instance serves, or that no instance serves. */
  readonly #local = new LocalCommandRouter();
  #subscription: Subscription | undefined;

  constructor(options: {
    nc: NatsConnection;
    clusterName: string;
    registry: DeviceRegistry;
    /** How long to wait for the owner: the command timeout plus a margin for the trip. */
    timeoutMs: number;
    onError: (error: unknown) => void;
  }) {
    this.#nc = options.nc;
    this.#link = NatsLink.of(options.nc);
    this.#registry = options.registry;
    this.#subject = (id) => `${options.clusterName}.inst.${id}.route`;
    this.#timeoutMs = options.timeoutMs;
    this.#onError = options.onError;
  }

  async send(device: RoutedDevice, request: RoutedRequest): Promise<unknown> {
    if (this.#registry.get(device.deviceId)) return this.#here(device, request);
    const owner = await this.#registry.ownerOf(device.deviceId);
    if (!owner || owner === this.#registry.instanceId) return this.#here(device, request);
    if (!this.#link.connected)
      throw new AppError(
        "device_offline",
        `${label(request)}: the device is connected to instance ${owner}, which this instance cannot reach: the cluster's message bus (NATS) is unreachable from here; try again shortly`,
      );
    const body = JSON.stringify({
      device,
      request,
      deadline: Date.now() + this.#timeoutMs,
    } satisfies Routed);
    const bytes = Buffer.byteLength(body);
    if (bytes > this.#link.maxPayload)
      throw new AppError(
        "invalid_argument",
        `${label(request)}: ${bytes} bytes is more than the ${this.#link.maxPayload} bytes the cluster's message bus (NATS max_payload) carries to the instance serving the device`,
      );
    let msg: Msg;
    try {
      msg = await this.#nc.request(this.#subject(owner), body, { timeout: this.#timeoutMs });
    } catch (error) {
      // The owner is gone (stopped, or dead and not swept yet): nobody serves the device.
      if (error instanceof RequestError && error.isNoResponders()) return this.#here(device, request);
      if (timedOut(error))
        throw new AppError(
          "device_timeout",
          `${label(request)}: instance ${owner}, which serves the device, did not answer within ${this.#timeoutMs / 1000}s`,
        );
      if (closed(error))
        throw new AppError(
          "device_offline",
          `${label(request)}: this instance is stopping or lost the cluster's message bus (NATS) before instance ${owner}, which serves the device, answered`,
        );
      throw error;
    }
    const reply = msg.json<Reply>();
    if (reply.ok) return reply.value;
    throw new AppError(
      reply.code in errorCatalog ? reply.code : "internal_error",
      reply.message,
      reply.extra,
    );
  }

  serve(handler: RoutedHandler): void {
    this.#local.serve(handler);
    this.#subscription ??= this.#nc.subscribe(this.#subject(this.#registry.instanceId), {
      callback: (error, msg) => {
        if (error) return this.#onError(error);
        void this.#answer(msg);
      },
    });
  }

  stop(): void {
    const subscription = this.#subscription;
    this.#subscription = undefined;
    if (subscription && !this.#nc.isClosed()) subscription.unsubscribe();
  }

  #here(device: RoutedDevice, request: RoutedRequest): Promise<unknown> {
    return this.#local.send(device, request);
  }

  /** Runs a request another instance routed here and replies with what came of it. */
  async #answer(msg: Msg): Promise<void> {
    let reply: Reply;
    try {
      const { device, request, deadline } = msg.json<Routed>();
      if (typeof deadline === "number" && Date.now() >= deadline)
        throw new AppError(
          "device_timeout",
          `${label(request)}: the request reached instance ${this.#registry.instanceId}, which serves the device, after its sender stopped waiting; it was not run`,
        );
      reply = { ok: true, value: (await this.#here(device, request)) ?? null };
    } catch (error) {
      if (error instanceof AppError) {
        const { fields, headers, details } = error;
        reply = { ok: false, code: error.code, message: error.message, extra: { fields, headers, details } };
      } else {
        this.#onError(error);
        reply = { ok: false, code: "internal_error", message: errorCatalog.internal_error.message };
      }
    }
    let text = JSON.stringify(reply);
    if (Buffer.byteLength(text) > this.#link.maxPayload)
      text = JSON.stringify({
        ok: false,
        code: "invalid_argument",
        message: `the device's answer is more than the ${this.#link.maxPayload} bytes the cluster's message bus (NATS max_payload) carries between instances`,
      } satisfies Reply);
    try {
      msg.respond(text);
    } catch (error) {
      this.#onError(error); // the connection closed meanwhile: the caller times out
    }
  }
}

/** The connection closed or is draining (this instance stopping): not the request's fault. */
function closed(error: unknown): boolean {
  const e = error as Error;
  return (
    error instanceof ClosedConnectionError ||
    error instanceof DrainingConnectionError ||
    e?.cause instanceof ClosedConnectionError ||
    e?.cause instanceof DrainingConnectionError
  );
}

function label(request: RoutedRequest): string {
  return request.kind === "command" ? request.type : request.kind;
}
