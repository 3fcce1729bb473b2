#!/usr/bin/env node
import { ConfigError, loadConfig } from "./config.ts";
import { DataDirError } from "./storage/data-dir.ts";

const shutdownTimeoutMs = 10_000;

async function main(): Promise<void> {
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`sdk-server: invalid configuration: ${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
  // Loaded only after the configuration is valid, so a bad value fails fast; the extensions only
  // when they are turned on (Home Assistant's MQTT client is a good part of a boot).
  const { createLogger, createServer, serverVersion } = await import("./app.ts");
  const extensions = [
    ...(config.mdns.enabled ? [(await import("./extensions/mdns.ts")).mdnsAdvertiser] : []),
    ...(config.homeAssistant
      ? [(await import("./extensions/home-assistant/bridge.ts")).homeAssistantBridge]
      : []),
  ];
  const logger = await createLogger(config);
  const server = await createServer({ config, logger, extensions });
  const url = await server.listen();
  logger.info(
    {
      version: serverVersion,
      dataDir: config.dataDir,
      database: server.database.dialect,
      location: server.database.location,
      ...(server.database.dialect === "sqlite"
        ? {
            commitThread: server.database.commits.thread,
            diskSyncMs:
              server.database.commits.diskSyncMs && Number(server.database.commits.diskSyncMs.toFixed(2)),
          }
        : {}),
    },
    `sdk server ${serverVersion} listening on ${url}`,
  );

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) {
      logger.warn(`${signal} again: exiting now`);
      process.exit(1);
    }
    stopping = true;
    logger.info(`${signal} received: finishing in-flight requests, then exiting`);
    setTimeout(() => {
      logger.error(`still busy after ${shutdownTimeoutMs / 1000}s: exiting anyway`);
      process.exit(1);
    }, shutdownTimeoutMs).unref();
    // SIGTERM is how containers and systemd stop a service for a restart or an upgrade: devices
    // are told to come back quickly. Anything else (Ctrl-C, `sdk dev` gone) is going away.
    server.close({ restart: signal === "SIGTERM" }).then(
      () => {
        logger.info("stopped cleanly");
        process.exit(0);
      },
      (error: unknown) => {
        logger.error({ err: error }, "error while stopping");
        process.exit(1);
      },
    );
  };
  process.on("SIGTERM", () => stop("SIGTERM"));
  process.on("SIGINT", () => stop("SIGINT"));
  // Started with an IPC channel (by `sdk dev`): the server is its parent's, and goes with it,
  // even when the parent is killed without a chance to stop it.
  if (process.send)
    process.on("disconnect", () => {
      if (!stopping) stop("parent process gone");
    });
}

// `sdk-server restore …` is a one-shot command instead of the server.
const command =
  process.argv[2] === "restore"
    ? import("./restore-command.ts").then((m) => m.restoreCommand(process.argv.slice(3)))
    : main();

command.catch((error: unknown) => {
  if (error instanceof DataDirError) {
    process.stderr.write(`sdk-server: ${error.message}\n`);
    process.exit(1);
  }
  process.stderr.write(
    `sdk-server: failed to start: ${error instanceof Error ? error.message : String(error)}\n`,
  );
  process.exit(1);
});
