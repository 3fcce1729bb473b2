import fs from "node:fs";
import { fileURLToPath } from "node:url";
import fastifyCookie from "@fastify/cookie";
import fastifyWebsocket from "@fastify/websocket";
import { dashboardDistUrl } from "@sdk/dashboard/built";
import { docsDirUrl } from "@sdk/docs";
import { deviceCloseCodes, maxFrameBytes, watchSubprotocol } from "@sdk/protocol";
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from "fastify";
import pino, { type Logger } from "pino";
import type { Cluster } from "./cluster/index.ts";
import type { InstanceLease } from "./cluster/lease.ts";
import type { Config } from "./config.ts";
import { type Database, openDatabase } from "./db/database.ts";
import { isDatabaseUnavailable } from "./errors.ts";
import { type EventBus, InProcessEventBus } from "./events/bus.ts";
import { checkCrossSite } from "./http/cross-site.ts";
import { frameworkErrorHandler, installErrorHandling, maxPathParamLength } from "./http/error-handler.ts";
import { installJsonBodyParser } from "./http/json-body.ts";
import { RequestLog } from "./http/request-log.ts";
import { route } from "./http/route.ts";
import { adminRoutes } from "./http/routes/admin.ts";
import { alertRoutes } from "./http/routes/alerts.ts";
import { authRoutes } from "./http/routes/auth.ts";
import { backupRoutes } from "./http/routes/backup.ts";
import { dashboardRoutes } from "./http/routes/dashboard.ts";
import { deploymentRoutes } from "./http/routes/deployments.ts";
import { deviceDataRoutes } from "./http/routes/device-data.ts";
import { deviceRoutes } from "./http/routes/devices.ts";
import { docsRoutes } from "./http/routes/docs.ts";
import { envVarRoutes } from "./http/routes/env-vars.ts";
import { firmwareRoutes } from "./http/routes/firmware.ts";
import { healthRoutes } from "./http/routes/health.ts";
import { projectRoutes } from "./http/routes/projects.ts";
import type { Route } from "./http/routes/registrar.ts";
import { retentionRoutes } from "./http/routes/retention.ts";
import { signInLinkRoutes } from "./http/routes/sign-in-link.ts";
import { type Clock, systemClock } from "./lib/clock.ts";
import { SecretBox } from "./lib/secret-box.ts";
import { type Lifecycle, Lifecycles } from "./lifecycle/lifecycle.ts";
import { type CommandRouter, LocalCommandRouter } from "./link/command-router.ts";
import { type DeviceRegistry, LocalDeviceRegistry } from "./link/registry.ts";
import { hasEncryptedRows } from "./repositories/encrypted-rows.ts";
import { BackupSchedule } from "./services/backup-schedule.ts";
import { FirmwareBundleImport } from "./services/firmware-bundle.ts";
import { createServices, type Services } from "./services/index.ts";
import { checkSecretKey } from "./services/secret-key-check.ts";
import { Sweeper } from "./services/sweeper.ts";
import { prepareDataDir } from "./storage/data-dir.ts";
import { acquireDataDirLock } from "./storage/data-dir-lock.ts";
import { checkNoInterruptedRestore } from "./storage/restore-journal.ts";
import { deviceSocket } from "./ws/device-socket.ts";
import { Heartbeat } from "./ws/heartbeat.ts";
import { projectWatchSocket } from "./ws/project-watch-socket.ts";
import { installUpgradeRefusals } from "./ws/upgrade.ts";
import { watchSocket } from "./ws/watch-socket.ts";

export const serverVersion: string = JSON.parse(
  fs.readFileSync(new URL("../package.json", import.meta.url), "utf8"),
).version;

/** How long a stopping server waits for device frames read before the close to be handled. */
const shutdownDrainMs = 5_000;

const defaultDocsDir = fileURLToPath(docsDirUrl);
const defaultDashboardDir = fileURLToPath(dashboardDistUrl);

export interface ServerOptions {
  config: Config;
  /** Tests move time forward with their own clock instead of sleeping. */
  clock?: Clock;
  logger?: Logger;
  docsDir?: string;
  /** The built dashboard (default: packages/dashboard/dist). */
  dashboardDir?: string;
  /** Integrations (MQTT, mDNS, …): started after the built-in parts, stopped before them. */
  extensions?: Extension[];
}

/** What an integration gets to work with: it listens to the bus and acts through the services. */
export interface ExtensionContext {
  bus: EventBus;
  services: Services;
  config: Config;
  logger: Logger;
  version: string;
  /** The port the server listens on (known once listening, which is before extensions start). */
  port(): number;
}
export type Extension = (context: ExtensionContext) => Lifecycle;

export interface Server {
  app: FastifyInstance;
  services: Services;
  /** Every event of the server (events/map.ts). */
  bus: EventBus;
  database: Database;
  config: Config;
  /** This server as an instance of a cluster (NATS_URL, docs/scaling.md); null for one process. */
  cluster: { instanceId: string; lease: InstanceLease; close(): Promise<void> } | null;
  /** `http://host:port` once listening. */
  url: string;
  listen(): Promise<string>;
  /**
   * Stops accepting, lets in-flight requests finish, closes the database. Safe to call twice.
   * `restart`: the server comes back soon (an upgrade): devices are told 1012 with a retry hint
   * instead of 1001.
   */
  close(options?: { restart?: boolean }): Promise<void>;
}

/**
 * Synchronous writes: lines reach stdout in order even when the process exits right after.
 * pino-pretty is loaded only for a terminal: a service (JSON lines) boots without it.
 */
export async function createLogger(config: Config): Promise<Logger> {
  const options = { level: config.logLevel, base: undefined };
  return config.logFormat === "pretty"
    ? pino(
        options,
        (await import("pino-pretty")).default({
          colorize: true,
          sync: true,
          translateTime: "SYS:HH:MM:ss.l",
          ignore: "pid,hostname,reqId,method,path,status,ms,ip",
        }),
      )
    : pino(options, pino.destination({ dest: 1, sync: true }));
}

/**
 * Builds the whole server (database, services, routes) without listening yet, holding DATA_DIR's
 * lock (so a restore cannot run on it) until it is closed.
 */
export async function createServer(options: ServerOptions): Promise<Server> {
  const dataDirWarning = prepareDataDir(options.config.dataDir);
  const lock = acquireDataDirLock(options.config.dataDir, "server");
  // Also on process.exit (the shutdown timeout, a fatal error): the lock is not left behind then.
  const release = () => {
    process.off("exit", release);
    lock.release();
  };
  process.on("exit", release);
  try {
    await checkNoInterruptedRestore(options.config.dataDir);
    const server = await buildServer(options, dataDirWarning);
    const close = server.close;
    server.close = (closeOptions) => close(closeOptions).finally(release);
    return server;
  } catch (error) {
    release();
    throw error;
  }
}

async function buildServer(options: ServerOptions, dataDirWarning: string | undefined): Promise<Server> {
  const { config } = options;
  const clock = options.clock ?? systemClock;
  const processStartedAt = clock.now();
  const logger = options.logger ?? (await createLogger(config));
  if (dataDirWarning) logger.warn(dataDirWarning);
  const database = await openDatabase({
    dataDir: config.dataDir,
    databaseUrl: config.databaseUrl,
    writeQueueMaxRows: config.writeQueueMaxRows,
    commitThread: config.sqliteCommitThread,
    onSlowStep: (message) => logger.warn(message),
  });
  if (database.notice) logger.warn(database.notice);
  const onError = (err: unknown) => logger.error({ err }, "background task failed");
  let box: SecretBox;
  // One process: the in-process bus and registry. An instance of a cluster (NATS_URL): NATS and
  // PostgreSQL carry its events, device ownership and commands to the other instances.
  let cluster: Cluster | undefined;
  try {
    box = SecretBox.fromKeyFile(config.secretKeyFile, {
      create: !(await hasEncryptedRows(database.db)),
      cluster: config.cluster !== null,
    });
    await checkSecretKey(database.db, box, {
      keyFile: config.secretKeyFile,
      cluster: config.cluster !== null,
      now: clock.now(),
    });
    // The cluster's code (NATS among it) is loaded only for a cluster: one process boots without it.
    if (config.cluster)
      cluster = await (await import("./cluster/index.ts")).connectCluster(config.cluster, {
        db: database.db,
        log: logger,
        onError,
        commandTimeoutSeconds: config.device.commandTimeoutSeconds,
      });
  } catch (error) {
    await database.close();
    throw error;
  }
  const bus: EventBus =
    cluster?.bus ?? new InProcessEventBus((err) => logger.error({ err }, "event subscriber failed"));
  const registry: DeviceRegistry = cluster?.registry ?? new LocalDeviceRegistry();
  const router: CommandRouter = cluster?.router ?? new LocalCommandRouter();
  const services = createServices({
    config,
    database,
    box,
    clock,
    version: serverVersion,
    bus,
    registry,
    router,
    ...(cluster && {
      clusterStatus: () => ({
        instanceId: cluster.config.instanceId,
        bus: cluster.busConnected() ? "connected" : "unreachable",
      }),
    }),
    onError,
    serverUrl: () => config.publicUrl ?? server.url,
  });
  // After NATS was unreachable (here or at another instance), what may have been missed is read
  // again from the database: watchers reconnect for a fresh snapshot, device connections and
  // running scripts are checked against their rows.
  cluster?.onResync(async () => {
    const watchers = services.watch.resync();
    await Promise.all([services.deviceLink.resync(), services.scripts.resync()]);
    logger.info(`cluster: resync done (${watchers} watch stream(s) closed to reconnect)`);
  });
  const lease: InstanceLease | undefined = cluster?.lease({
    log: logger,
    registry,
    devices: services.deviceLink,
  });
  // On a full disk these writes fail: skipped with a warning, the server starts (/ready answers 503)
  // rather than stopping, which a restart policy would turn into a crash loop.
  const atBoot = async (what: string, write: () => Promise<unknown>) => {
    try {
      await write();
    } catch (err) {
      if (!isDatabaseUnavailable(err)) throw err;
      logger.warn({ err }, `${what} skipped: the database cannot write now (is the disk full?)`);
    }
  };
  try {
    // In a cluster the other instances serve their devices: only those no live instance serves go offline.
    if (lease) {
      await lease.begin();
      lease.start();
    } else await atBoot("marking the devices offline", () => services.deviceLink.markAllOffline());
  } catch (error) {
    await lease?.stop();
    await cluster?.close();
    await database.close();
    throw error;
  }
  await atBoot("failing the deployments cut off by the restart", () =>
    services.deployments.recoverInterrupted(processStartedAt),
  );

  const app: FastifyInstance = Fastify({
    loggerInstance: logger as FastifyBaseLogger,
    trustProxy: config.trustProxy,
    bodyLimit: 1024 * 1024,
    routerOptions: { maxParamLength: maxPathParamLength },
    frameworkErrors: frameworkErrorHandler(config.publicUrl),
    logController: new RequestLog(),
  });
  await app.register(fastifyCookie);
  await app.register(fastifyWebsocket, {
    options: {
      maxPayload: maxFrameBytes - 1,
      // Watchers offer ["sdk.v1", "bearer.<token>"]: choose sdk.v1, never echo the token back.
      handleProtocols: (offered: Set<string>) => (offered.has(watchSubprotocol) ? watchSubprotocol : false),
    },
    // Socket errors (an oversized frame, a peer that vanished) are the sockets' own business.
    errorHandler: (error, socket, request) => {
      if ((error as { code?: string }).code !== "WS_ERR_UNSUPPORTED_MESSAGE_LENGTH") {
        request.log.warn({ err: error }, "websocket error");
      }
      socket.terminate();
    },
  });
  installJsonBodyParser(app);
  app.removeContentTypeParser("text/plain"); // the API speaks JSON: anything else is a 415…
  // …but for raw uploads (the firmware endpoint); http/route.ts refuses them everywhere else.
  app.addContentTypeParser("application/octet-stream", { parseAs: "buffer" }, (_request, body, done) =>
    done(null, body),
  );
  const spaFallback = await dashboardRoutes(app, options.dashboardDir ?? defaultDashboardDir);
  installErrorHandling(app, config.publicUrl, spaFallback);
  app.addHook("onRequest", async (request) => checkCrossSite(request, config.publicUrl));

  const bound: Route = (name, handler) => route(app, services, name, handler);
  for (const registrar of [
    authRoutes,
    adminRoutes,
    projectRoutes,
    deviceRoutes,
    deviceDataRoutes,
    envVarRoutes,
    deploymentRoutes,
    firmwareRoutes,
    backupRoutes,
    retentionRoutes,
    alertRoutes,
  ]) {
    registrar(bound, services, config);
  }
  healthRoutes(app, services);
  signInLinkRoutes(app, services, config);
  docsRoutes(app, options.docsDir ?? defaultDocsDir, serverVersion);
  const heartbeat = new Heartbeat(config.device.heartbeatSeconds);
  const deviceSockets = deviceSocket(app, services, heartbeat, config.publicUrl);
  watchSocket(app, services, heartbeat, config.publicUrl);
  projectWatchSocket(app, services, heartbeat, config.publicUrl);
  installUpgradeRefusals(app, config.publicUrl);

  // Recording starts before any request can be served and ends after the last one has answered,
  // so every request's audit entry is written, whether or not the server ever listens.
  services.auditLog.start();
  const sweeper = new Sweeper(
    { session: services.auth.purgeExpiredSessions, retention: services.retention.sweep },
    (err, task) => logger.warn({ err }, `${task} sweep failed`),
    {
      databaseCap: services.retention.enforceCap,
      disk: async () => {
        const change = await services.retention.checkDisk();
        if (change) logger[change.level](change.message);
      },
    },
  );
  const context: ExtensionContext = {
    bus,
    services,
    config,
    logger,
    version: serverVersion,
    port: () => {
      const address = app.server.address();
      return typeof address === "object" && address ? address.port : config.port;
    },
  };
  // The long-running parts, in start order: started once listening, stopped in reverse on close.
  const parts = new Lifecycles(
    [
      sweeper,
      heartbeat,
      services.deviceLink,
      services.devicePins,
      services.scripts,
      services.alertMonitor,
      services.rollouts,
      new FirmwareBundleImport({
        dir: config.firmwareDir,
        firmware: services.firmware,
        log: { info: (m) => logger.info(m), warn: (m) => logger.warn(m) },
      }),
      new BackupSchedule({ backups: services.backups, ...config.backup, log: logger, clock }),
      ...(options.extensions ?? []).map((extension) => extension(context)),
    ],
    (err, part) => logger.error({ err }, `${part}: stop failed`),
  );

  let closing: Promise<void> | undefined;
  const server: Server = {
    app,
    services,
    bus,
    database,
    config,
    cluster: cluster && lease ? { instanceId: cluster.config.instanceId, lease, close: cluster.close } : null,
    url: "",
    async listen() {
      // A deep accept queue: after a restart, thousands of boards reconnect at once.
      await app.listen({ port: config.port, host: config.host, backlog: 4096 });
      const address = app.server.address();
      const port = typeof address === "object" && address ? address.port : config.port;
      const host = config.host === "0.0.0.0" || config.host === "::" ? "localhost" : config.host;
      server.url = `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
      await parts.start();
      return server.url;
    },
    close(options) {
      closing ??= (async () => {
        services.deviceLink.stopFor({ restart: options?.restart === true });
        await parts.stop();
        for (const client of app.websocketServer.clients)
          client.close(deviceCloseCodes.goingAway, "server shutting down");
        const farewell = services.deviceLink.farewell();
        deviceSockets.closeAll(farewell.code, farewell.reason);
        // The frames devices sent before the close are still handled: their writes must reach the
        // database before it closes.
        const busy = await services.deviceLink.drain(shutdownDrainMs);
        if (busy > 0)
          logger.warn(
            `${busy} device connection(s) still handling frames after ${shutdownDrainMs / 1000} s: ` +
              "closing the database anyway (what they still hold is not stored)",
          );
        await app.close();
        // The sockets are closed and their last frames handled: the lease row goes (the devices
        // were taken offline by the device link), then the NATS connection, with what it still sends.
        await lease?.stop();
        await cluster?.close();
        services.auditLog.stop();
        await database.close();
      })();
      return closing;
    },
  };
  return server;
}
