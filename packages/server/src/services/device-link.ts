import { timingSafeEqual } from "node:crypto";
import { type Board, type CommandOutcomeRecord, deviceCloseCodes, restartCloseReason } from "@sdk/protocol";
import { AppError } from "../errors.ts";
import type { Unsubscribe } from "../events/bus.ts";
import { hashSecret } from "../lib/tokens.ts";
import type { CommandRouter } from "../link/command-router.ts";
import type { DeviceConnection } from "../link/registry.ts";
import type { LostDevice } from "../repositories/devices.ts";
import type { Principal } from "./auth.ts";
import { validateCommand } from "./device-link/command-args.ts";
import { commandIds } from "./device-link/command-rpc.ts";
import {
  type DeviceAuth,
  DeviceSession,
  type LinkDeps,
  type LinkSession,
  type Transport,
} from "./device-link/session.ts";
import { type DeviceRef, requireVisibleDevice } from "./device-logs.ts";
import type { DevicePinsService } from "./device-pins.ts";

export type { DeviceAuth, LinkSession, Transport } from "./device-link/session.ts";

export interface DeviceLinkDeps extends LinkDeps {
  /** Commands and raw messages go to the instance serving the device (`serveCommand`/`sendRawHere` there). */
  router: CommandRouter;
  commandTimeoutSeconds: number;
  /** Learns the board's pins from every command answered (REST and scripts alike). */
  pins: Pick<DevicePinsService, "recordCommand">;
}

const serverStoppingLine = "server stopping: disconnected until the server is back";
const crashLine = (device: LostDevice) =>
  `the device${device.lastSeenAt ? `, last seen ${new Date(device.lastSeenAt).toISOString()},` : ""} went offline with it`;

/**
 * The device link: authenticates devices, opens a protocol session per connection, sends commands
 * and raw messages to connected devices. As a lifecycle part it closes the connection of a device
 * that is deleted or whose credentials change, and closes every connection when the server stops.
 */
const interned = new Map<string, string>();
function intern<T extends string>(text: T): T {
  const known = interned.get(text);
  if (known !== undefined) return known as T;
  if (interned.size >= 10_000) interned.clear();
  interned.set(text, text);
  return text;
}

export function deviceLinkService(deps: DeviceLinkDeps) {
  const { repos, registry, bus, router } = deps;
  let stopping = false;
  let restart = false;
  let unsubscribe: Unsubscribe[] = [];
  /** Every connection whose socket is open or whose frames are still being handled. */
  const sessions = new Set<DeviceSession>();
  /** Told when a device this instance served is served by another one now (its script instance ends). */
  const releasedHandlers = new Set<(device: DeviceConnection) => void>();
  const released = (connection: DeviceConnection) => {
    for (const handler of releasedHandlers) handler(connection);
  };
  const context = {
    ...deps,
    nextCommandId: commandIds(),
    stopping: () => stopping,
    settled: (session: DeviceSession) => void sessions.delete(session),
    released,
  };
  /** The close code and reason of the connections when the server stops. */
  const farewell = (): { code: number; reason: string } =>
    restart
      ? { code: deviceCloseCodes.serviceRestart, reason: restartCloseReason() }
      : { code: deviceCloseCodes.goingAway, reason: "server shutting down" };
  /** The secret hash each device authenticated with here (a resync checks it against its row). */
  const authenticatedWith = new Map<string, string>();
  const closeLive = (deviceId: string, reason: string) =>
    registry.get(deviceId)?.close(deviceCloseCodes.revoked, reason);
  /** Logs why each lost device went offline and tells watchers everywhere (`device.disconnected`). */
  const tellLost = (devices: LostDevice[], line: string, reason: string) =>
    Promise.all(
      devices.map(async (device) => {
        const ref = { projectId: device.projectId, deviceId: device.id };
        await deps.logs.append(ref, "warn", "system", `${line}: ${crashLine(device)}`);
        await bus.publish("device.disconnected", { ...ref, at: deps.clock.now(), reason });
      }),
    );

  /** A newer connection on another instance serves the device: this one closes, the device stays online. */
  const letGo = (connection: DeviceConnection) => {
    void deps.logs
      .append(
        connection,
        "warn",
        "system",
        "a new connection with the same credentials replaced the previous one (on another server instance)",
      )
      .catch(deps.onError);
    connection.close(deviceCloseCodes.replaced, "replaced by a new connection on another server instance");
    released(connection);
  };

  /** The `device.command` event: what a command asked and how it ended. */
  const publishCommand = (
    device: DeviceRef,
    source: "script" | "api",
    command: string,
    args: Record<string, unknown>,
    result: CommandOutcomeRecord,
    ms: number,
  ) =>
    void bus.publish("device.command", {
      projectId: device.projectId,
      deviceId: device.deviceId,
      at: deps.clock.now(),
      source,
      command,
      args,
      result,
      ms,
    });

  return {
    name: "device link",

    start(): void {
      stopping = false;
      // Wherever the device's socket is: every instance hears these and closes it if it is here.
      unsubscribe = [
        bus.subscribe("device.deleted", (e) => closeLive(e.deviceId, "device deleted"), { everywhere: true }),
        bus.subscribe("device.credentials_rotated", (e) => closeLive(e.deviceId, "credentials rotated"), {
          everywhere: true,
        }),
        // The device reconnected to another instance, which serves it now: this socket closes
        // without the device going offline (its close is no longer the current connection's).
        registry.onReleased(letGo),
      ];
    },

    /**
     * How the next stop closes the connections: for a restart (an upgrade) with 1012 and a retry
     * hint, so devices come back within a second or two of the next server accepting; otherwise
     * with 1001 (going away), and devices reconnect with their normal backoff.
     */
    stopFor(options: { restart: boolean }): void {
      restart = options.restart;
    },

    farewell,

    /**
     * Another instance serves a device this one served (it took the connection over), without a
     * `device.disconnected`: the local effects of a disconnect (its script instance) are the
     * handler's. Never called in one process. Returns the unsubscribe.
     */
    onReleased(handler: (device: DeviceConnection) => void): () => void {
      releasedHandlers.add(handler);
      return () => void releasedHandlers.delete(handler);
    },

    /**
     * Server shutdown: each connected device's log says so and the device is offline from now (the
     * database is still open), then every connection closes (`farewell`).
     */
    async stop(): Promise<void> {
      stopping = true;
      for (const off of unsubscribe.splice(0)) off();
      const connections = [...registry.all()];
      const now = deps.clock.now();
      await Promise.all(
        connections.map((connection) => {
          const logged = deps.logs.append(connection, "warn", "system", serverStoppingLine);
          // Watchers on the other instances of a cluster hear it (this instance's close with it).
          const offline = repos.devices
            .setPresence(connection.deviceId, {
              status: "offline",
              lastSeenAt: now,
              instanceId: registry.instanceId,
            })
            .then((applied) => {
              if (applied)
                return bus.publish("device.disconnected", {
                  projectId: connection.projectId,
                  deviceId: connection.deviceId,
                  at: now,
                  reason: "server stopping",
                });
            })
            .catch(deps.onError);
          return Promise.all([logged, offline]);
        }),
      );
      const { code, reason } = farewell();
      for (const connection of connections) connection.close(code, reason);
    },

    /** Checks a device id and secret; the same error for an unknown id and a wrong secret. */
    async authenticate(deviceId: string, secret: string): Promise<DeviceAuth> {
      const device = await repos.devices.findForAuth(deviceId);
      const expected = Buffer.from(device?.secretHash ?? "0".repeat(64), "hex");
      const actual = Buffer.from(hashSecret(secret), "hex");
      if (!device || !timingSafeEqual(expected, actual)) throw new AppError("invalid_device_credentials");
      authenticatedWith.set(device.id, device.secretHash);
      // One string per project and board, not a copy per connection read from each device's row.
      const auth = { deviceId: device.id, projectId: intern(device.projectId), board: intern(device.board) };
      if (!registry.shared) return auth;
      // A cluster: the connection's place among the device's connections on every instance.
      const generation = await repos.devices.nextGeneration(device.id);
      if (generation === undefined) throw new AppError("invalid_device_credentials"); // deleted meanwhile
      return { ...auth, generation };
    },

    open(auth: DeviceAuth, transport: Transport): LinkSession {
      const session = new DeviceSession(auth, transport, context);
      sessions.add(session);
      session.awaitHello();
      return session;
    },

    /**
     * This instance of a cluster may have missed `device.deleted` or `device.credentials_rotated`
     * (NATS was unreachable): each device connected here is checked against its row, and closed as
     * those events close it when it is gone or its secret changed.
     */
    async resync(): Promise<void> {
      const connections = [...registry.all()];
      const open = new Set([...sessions].map((session) => session.deviceId));
      for (const id of authenticatedWith.keys()) if (!open.has(id)) authenticatedWith.delete(id);
      await Promise.all(
        connections.map(async ({ deviceId }) => {
          const row = await repos.devices.findForAuth(deviceId);
          if (!row) return closeLive(deviceId, "device deleted");
          const hash = authenticatedWith.get(deviceId);
          if (hash !== undefined && hash !== row.secretHash) closeLive(deviceId, "credentials rotated");
        }),
      );
    },

    /** Closes every connection still open, also those that have not said hello. */
    closeAll(code: number, reason: string): void {
      for (const session of sessions) session.close(code, reason);
    },

    /**
     * Once the device sockets are closing: resolves when every frame they read before the close has
     * been handled, or after `timeoutMs`, with the number of connections still busy then.
     */
    async drain(timeoutMs: number): Promise<number> {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, timeoutMs);
      });
      await Promise.race([Promise.all([...sessions].map((session) => session.settled())), timeout]);
      clearTimeout(timer);
      return sessions.size;
    },

    /** Whether the device has a live connection to this instance (said hello, not closed since). */
    connectedHere: (deviceId: string): boolean => registry.get(deviceId) !== undefined,

    /**
     * Whether the device is online: connected here (no wait, no query), else served by another
     * instance of a cluster (the registry's ownership).
     */
    isOnline: async (deviceId: string): Promise<boolean> =>
      registry.get(deviceId) !== undefined || (await registry.ownerOf(deviceId)) !== null,

    /** False once the server stops: a device that dials now is turned away (it retries). */
    accepting: () => !stopping,

    /**
     * Sends a command to a connected device, on the instance serving it, and resolves with its
     * result. `board` is the registered board when the caller knows it: arguments wrong for it are
     * refused here; the instance serving the device checks them against the live connection's.
     * `source` says who sent it, for the `device.command` event (a recording keeps the script's
     * commands).
     */
    async command(
      device: DeviceRef & { board?: Board },
      type: string,
      args: Record<string, unknown>,
      source: "script" | "api" = "api",
    ): Promise<unknown> {
      const ref = { projectId: device.projectId, deviceId: device.deviceId };
      if (device.board !== undefined) {
        try {
          validateCommand(device.board, type, args);
        } catch (error) {
          if (error instanceof AppError)
            publishCommand(
              ref,
              source,
              type,
              args,
              { ok: false, code: error.code, message: error.message },
              0,
            );
          throw error;
        }
      }
      return router.send(ref, { kind: "command", type, args, source });
    },

    /** `command` on the instance serving the device (or finding it offline): the router's `command`. */
    async serveCommand(
      device: DeviceRef,
      type: string,
      args: Record<string, unknown>,
      source: "script" | "api",
    ): Promise<unknown> {
      const found = registry.get(device.deviceId);
      const connection = found?.projectId === device.projectId ? found : undefined;
      /**
       * A command refused before it reached the device (bad arguments, the device offline) is an
       * event too, with `ms` 0: when the device is known to be in the project (its live connection,
       * or its row, read now). Watchers follow a device id.
       */
      const refuse = async (error: AppError, args: Record<string, unknown>): Promise<never> => {
        const inProject =
          connection !== undefined ||
          (await repos.devices.findForAuth(device.deviceId))?.projectId === device.projectId;
        if (inProject)
          publishCommand(
            device,
            source,
            type,
            args,
            { ok: false, code: error.code, message: error.message },
            0,
          );
        throw error;
      };
      let command: ReturnType<typeof validateCommand>;
      try {
        command = validateCommand(connection?.board, type, args);
      } catch (error) {
        if (error instanceof AppError) return refuse(error, args);
        throw error;
      }
      if (!connection) return refuse(new AppError("device_offline"), command.args);
      const started = performance.now();
      const sent = (result: CommandOutcomeRecord) =>
        publishCommand(
          device,
          source,
          command.type,
          command.args,
          result,
          Math.round(performance.now() - started),
        );
      let result: unknown;
      try {
        result = await connection.command(command.type, command.args, deps.commandTimeoutSeconds * 1000);
      } catch (error) {
        sent(
          error instanceof AppError
            ? { ok: false, code: error.code, message: error.message }
            : { ok: false, code: "device_error", message: String(error) },
        );
        throw error;
      }
      deps.pins.recordCommand(device, command.type, command.args, result);
      sent({ ok: true, value: result ?? null });
      return result;
    },

    /** A command on behalf of a user: 404 unless they may see the device. */
    async commandAs(principal: Principal, device: DeviceRef, type: string, args: Record<string, unknown>) {
      const { board } = await requireVisibleDevice(repos, principal, device);
      return this.command({ ...device, board }, type, args);
    },

    /**
     * A raw typed message for the device (scripts' `DEVICE.send`), sent by the instance serving it;
     * the device does not answer it. Rejects when the device is offline or the message too large.
     */
    async sendRaw(device: DeviceRef, message: Record<string, unknown>): Promise<void> {
      await router.send(device, { kind: "raw", message });
    },

    /** `sendRaw` on the instance serving the device: the router's `raw`. */
    sendRawHere(device: DeviceRef, message: Record<string, unknown>): void {
      const connection = registry.get(device.deviceId);
      if (!connection || connection.projectId !== device.projectId) throw new AppError("device_offline");
      if (Buffer.byteLength(JSON.stringify(message)) > connection.maxFrame) {
        throw new AppError(
          "invalid_argument",
          `the message is larger than this device accepts (${connection.maxFrame} bytes)`,
        );
      }
      connection.send(message);
      void bus.publish("device.sent", {
        projectId: device.projectId,
        deviceId: device.deviceId,
        at: deps.clock.now(),
        message,
      });
    },

    /**
     * A message for a device's script from elsewhere than the device (the API, a tag, Home
     * Assistant): a `script.message` event, which a recording (the watch's `?record=true`) keeps.
     */
    publishScriptMessage: (device: DeviceRef, message: Record<string, unknown>): void =>
      void bus.publish("script.message", {
        projectId: device.projectId,
        deviceId: device.deviceId,
        at: deps.clock.now(),
        message: message as { type: string } & Record<string, unknown>,
      }),

    /**
     * At boot: devices the database still has online lost their connection when the server stopped
     * without closing it; their logs say so (a clean stop already logged `serverStoppingLine`).
     */
    async markAllOffline(): Promise<void> {
      const lost = await repos.devices.markAllOffline();
      await Promise.all(
        lost.map((device) =>
          deps.logs.append(
            { projectId: device.projectId, deviceId: device.id },
            "warn",
            "system",
            `server restarted after stopping without closing connections (a crash, a kill or a power cut): ${crashLine(device)}`,
          ),
        ),
      );
    },

    /**
     * At the boot of a cluster's instance: only the devices no live instance serves are offline
     * (their instance died, or none was recorded); their logs say so and watchers are told.
     */
    async markOfflineExcept(liveInstanceIds: string[]): Promise<void> {
      await tellLost(
        await repos.devices.markOfflineExcept(liveInstanceIds),
        "its server instance stopped without closing connections (a crash, a kill or a power cut)",
        "server instance stopped",
      );
    },

    /**
     * A cluster's instance died (its lease expired): its devices went offline (this instance's
     * sweep did it, once across the cluster); their logs say so and watchers everywhere are told
     * (`device.disconnected`).
     */
    async instanceLost(deadInstanceId: string, devices: LostDevice[]): Promise<void> {
      await tellLost(
        devices,
        `server instance ${deadInstanceId} stopped answering (its lease expired)`,
        "server instance stopped",
      );
    },

    /**
     * A cluster's instance stopped cleanly with devices still online on it (a hello that completed
     * while it stopped): they went offline with its lease row; their logs say so, watchers hear it.
     */
    async leftAtStop(devices: LostDevice[]): Promise<void> {
      await tellLost(devices, "server instance stopping", "server stopping");
    },

    /**
     * This instance was taken for dead while it still served its devices (its lease renewals
     * stalled): `taken` are online here again in the database; they are claimed again (an instance
     * that heard nothing keeps nothing older) and announced online (`device.connected`: watchers,
     * Home Assistant and alerts heard them go offline). `lost` reconnected elsewhere or have a newer
     * connection meanwhile: their connections here close as replaced ones do.
     */
    async reclaimed(taken: string[], lost: string[]): Promise<void> {
      const now = deps.clock.now();
      await Promise.all(
        taken.map(async (deviceId) => {
          const connection = registry.get(deviceId);
          if (!connection) return;
          registry.claim(connection);
          await deps.logs.append(
            connection,
            "warn",
            "system",
            "online again: this server instance was taken for dead (its lease expired) while it still served the device",
          );
          await bus.publish("device.connected", {
            projectId: connection.projectId,
            deviceId,
            at: now,
            board: connection.board,
            firmware: connection.firmware,
          });
        }),
      );
      for (const deviceId of lost) {
        const connection = registry.get(deviceId);
        if (connection && registry.unregister(connection)) letGo(connection);
      }
    },
  };
}
export type DeviceLinkService = ReturnType<typeof deviceLinkService>;
