import type { Config } from "../config.ts";
import type { Database } from "../db/database.ts";
import type { EventBus } from "../events/bus.ts";
import type { Clock } from "../lib/clock.ts";
import type { SecretBox } from "../lib/secret-box.ts";
import { type CommandRouter, LocalCommandRouter, type RoutedHandler } from "../link/command-router.ts";
import type { DeviceRegistry } from "../link/registry.ts";
import { createRepositories } from "../repositories/index.ts";
import { retentionRepository } from "../repositories/retention.ts";
import { FirmwareFiles } from "../storage/firmware-files.ts";
import { ProjectFiles } from "../storage/project-files.ts";
import { AlertMonitor } from "./alert-monitor.ts";
import { alertsService } from "./alerts.ts";
import { AuditRecorder, auditService } from "./audit.ts";
import { authService } from "./auth.ts";
import { backupsService } from "./backups.ts";
import { deploymentsService } from "./deployments.ts";
import { deviceLinkService } from "./device-link.ts";
import { deviceLogsService } from "./device-logs.ts";
import { devicePinsService } from "./device-pins.ts";
import { deviceStateService } from "./device-state.ts";
import { devicesService } from "./devices.ts";
import { envVarsService } from "./env-vars.ts";
import { firmwareService } from "./firmware.ts";
import { homeAssistantService } from "./home-assistant.ts";
import { projectsService } from "./projects.ts";
import { rateLimiter } from "./rate-limiter.ts";
import { type ClusterStatus, readinessService } from "./readiness.ts";
import { retentionService } from "./retention.ts";
import { rolloutsService } from "./rollouts.ts";
import { scriptHostService } from "./script-host.ts";
import { tagActionsService } from "./tag-actions.ts";
import { usersService } from "./users.ts";
import { watchService } from "./watch.ts";

export interface ServiceDeps {
  config: Config;
  bus: EventBus;
  registry: DeviceRegistry;
  /**
   * Where commands and script messages for a device run: the instance serving it. Default: this
   * process (LocalCommandRouter); a cluster passes its own (src/cluster/).
   */
  router?: CommandRouter;
  /** An instance of a cluster: its id and whether NATS answers now (`/ready` says both). */
  clusterStatus?: () => ClusterStatus;
  onError: (error: unknown) => void;
  database: Database;
  box: SecretBox;
  clock: Clock;
  version: string;
  /** The server's base URL as users reach it: PUBLIC_URL, else where it listens. */
  serverUrl: () => string;
}

/** Wires repositories into services. Routes and sockets only ever see what this returns. */
export function createServices({
  config,
  database,
  box,
  clock,
  version,
  bus,
  registry,
  router = new LocalCommandRouter(),
  clusterStatus,
  onError,
  serverUrl,
}: ServiceDeps) {
  const repos = createRepositories(database.db, database.batcher);
  const files = new ProjectFiles(config.dataDir);
  const audit = auditService(repos.auditLog);
  // A cluster's instances count sign-in attempts, and keep firmware files, in the shared database.
  const shared = config.cluster !== null;
  const limiter = rateLimiter(config.rateLimit, clock, shared ? database.db : null);
  const firmware = firmwareService({ repos, files: new FirmwareFiles(config.dataDir), bus, clock, shared });
  const devices = devicesService({ repos, bus, clock, firmware });
  const deviceLogs = deviceLogsService({ repos, bus, clock, limits: config.device, onError });
  const deviceState = deviceStateService({ repos, bus, clock, limits: config.device });
  const devicePins = devicePinsService({
    repos,
    bus,
    clock,
    // Pins are learnt where the device is served: its commands run there (the router) and its
    // messages arrive there, so "connected" is "connected to this instance" (no wait, no query).
    connected: (deviceId) => deviceLink.connectedHere(deviceId),
  });
  const deviceLink = deviceLinkService({
    repos,
    pins: devicePins,
    registry,
    router,
    bus,
    logs: deviceLogs,
    state: deviceState,
    clock,
    heartbeatSeconds: config.device.heartbeatSeconds,
    commandTimeoutSeconds: config.device.commandTimeoutSeconds,
    onError,
    // The script host is built after the link it commands devices through.
    scriptRoom: (projectId) => scripts.waitForRoom(projectId),
  });
  const envVars = envVarsService({ repos, box, bus, clock });
  const retention = retentionService({
    repos,
    retention: retentionRepository(database.db, database.dialect),
    database,
    config,
    clock,
  });
  const scripts = scriptHostService({
    repos,
    bus,
    router,
    link: deviceLink,
    logs: deviceLogs,
    state: deviceState,
    env: envVars,
    limits: config.scripts,
    docsBaseUrl: serverUrl,
    onError,
  });
  /** What this instance does for the devices it serves (or finds offline), whichever instance asked. */
  const serveRouted: RoutedHandler = async (device, request) => {
    switch (request.kind) {
      case "command":
        return deviceLink.serveCommand(device, request.type, request.args, request.source);
      case "raw":
        deviceLink.sendRawHere(device, request.message);
        return null;
      case "message":
        scripts.deliverHere(device, request.message);
        return null;
    }
  };
  router.serve(serveRouted);
  const rollouts = rolloutsService({
    repos,
    scripts,
    logs: deviceLogs,
    bus,
    clock,
    windowSeconds: config.canaryWindowSeconds,
    onError,
    cluster: shared,
  });
  const auth = authService({
    repos,
    bus,
    limiter,
    clock,
    allowRegistration: config.allowRegistration,
    sessionMaxAgeDays: config.sessionMaxAgeDays,
    version,
    deploymentsKept: config.deploymentsKept,
  });
  const alerts = alertsService({
    repos,
    box,
    clock,
    allowPrivate: config.webhooks.allowPrivate,
    version,
    shared,
  });
  return {
    /** Commands, raw messages and script messages go through it to the instance serving the device. */
    router,
    /** What `router` runs here (tests wrap it to see what goes through). */
    serveRouted,
    audit,
    /** Records the security-relevant events (a lifecycle part: it subscribes when started). */
    auditLog: new AuditRecorder({ repo: repos.auditLog, bus, clock }),
    auth,
    users: usersService({ repos, bus, files, clock }),
    projects: projectsService({ repos, bus, files, clock }),
    devices,
    deviceLogs,
    deviceState,
    deviceLink,
    devicePins,
    scripts,
    /** Canaries and the first-minute watch of plain deploys (a lifecycle part: its timers, boot recovery). */
    rollouts,
    deployments: deploymentsService({
      repos,
      files,
      scripts,
      rollouts,
      bus,
      clock,
      kept: config.deploymentsKept,
      onError,
    }),
    watch: watchService({ devices, state: deviceState, bus }),
    envVars,
    firmware,
    homeAssistant: homeAssistantService({ repos, config: config.homeAssistant }),
    backups: backupsService({ dataDir: config.dataDir, database, bus, clock, version }),
    readiness: readinessService({
      repos,
      clock,
      dialect: database.dialect,
      disk: retention.diskStatus,
      cluster: clusterStatus,
    }),
    retention,
    tagActions: tagActionsService({ devices, link: deviceLink, scripts, onError }),
    alerts,
    /** Alert rules over the bus and the webhook delivery queue (a lifecycle part). */
    // Asked every tick for each offline device: connected to this instance, no query (a device
    // another instance serves is known from the database, deviceLink.isOnline or the bus).
    alertMonitor: new AlertMonitor({
      alerts,
      repos,
      bus,
      clock,
      onError,
      isOnline: deviceLink.connectedHere,
    }),
  };
}
export type Services = ReturnType<typeof createServices>;
