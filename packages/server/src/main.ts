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
  // Loaded only after the configuration is valid, so a bad value fails fast.
  const { createLogger, createServer, serverVersion } = await import("./app.ts");
  const { mdnsAdvertiser } = await import("./extensions/mdns.ts");
  const { homeAssistantBridge } = await import("./extensions/home-assistant/bridge.ts");
  const logger = createLogger(config);
  const server = await createServer({
    config,
    logger,
    extensions: [
      ...(config.mdns.enabled ? [mdnsAdvertiser] : []),
      ...(config.homeAssistant ? [homeAssistantBridge] : []),
    ],
  });
  const url = await server.listen();
  logger.info(
    {
      version: serverVersion,
      dataDir: config.dataDir,
      database: server.database.dialect,
      location: server.database.location,
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
    server.close().then(
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

const restoreUsage = `Usage: sdk-server restore ARCHIVE [--data-dir DIR] [--force]

Restores a backup (from sdk backup, GET /v1/admin/backup or DATA_DIR/backups/) into a data
directory: DIR, else DATA_DIR, else ./data. The archive's manifest and every file's SHA-256 are
checked before anything is written. The directory must be empty (backups/ aside) unless --force
is given: then its contents are replaced (backups/ is kept). Stop the server first.
With PostgreSQL the archive holds no database: restore that from your pg_dump.`;

/** `sdk-server restore …`: a one-shot command instead of the server. */
async function restore(args: string[]): Promise<void> {
  const { parseArgs } = await import("node:util");
  let parsed: ReturnType<typeof parseRestoreArgs>;
  function parseRestoreArgs() {
    return parseArgs({
      args,
      allowPositionals: true,
      options: {
        "data-dir": { type: "string" },
        force: { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
    });
  }
  try {
    parsed = parseRestoreArgs();
  } catch (error) {
    process.stderr.write(`sdk-server restore: ${(error as Error).message}\n\n${restoreUsage}\n`);
    process.exit(2);
  }
  if (parsed.values.help) {
    process.stdout.write(`${restoreUsage}\n`);
    return;
  }
  if (parsed.positionals.length !== 1) {
    process.stderr.write(`sdk-server restore: name one archive\n\n${restoreUsage}\n`);
    process.exit(2);
  }
  let dataDir = parsed.values["data-dir"];
  if (dataDir === undefined) {
    try {
      dataDir = loadConfig().dataDir;
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      process.stderr.write(`sdk-server: invalid configuration: ${error.message}\n`);
      process.exit(1);
    }
  }
  const { restoreArchive, RestoreError } = await import("./storage/restore.ts");
  const { ArchiveError } = await import("./storage/tar.ts");
  const archive = parsed.positionals[0]!;
  try {
    const result = await restoreArchive(archive, dataDir, { force: parsed.values.force === true });
    const { manifest } = result;
    const lines = [
      `Restored ${archive} into ${result.dataDir}`,
      `  taken ${manifest.createdAt} by sdk-server ${manifest.serverVersion} (${manifest.dialect}); ${manifest.files.length} files verified`,
    ];
    if (result.replaced.length) lines.push(`  replaced: ${result.replaced.join(", ")}`);
    if (manifest.database === null)
      lines.push("  the database is PostgreSQL and not in the archive: restore it from your pg_dump");
    lines.push("Start the server on it (DATA_DIR) to use it.");
    process.stdout.write(`${lines.join("\n")}\n`);
  } catch (error) {
    if (error instanceof ArchiveError) {
      process.stderr.write(`sdk-server restore: ${archive}: ${error.message}; nothing was written\n`);
      process.exit(1);
    }
    if (error instanceof RestoreError) {
      process.stderr.write(`sdk-server restore: ${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
}

const command = process.argv[2] === "restore" ? restore(process.argv.slice(3)) : main();

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
