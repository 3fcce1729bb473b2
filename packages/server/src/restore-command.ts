import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { ConfigError, loadConfig } from "./config.ts";
import { RestoreError, restoreArchive } from "./storage/restore.ts";
import { ArchiveError } from "./storage/tar.ts";

const restoreUsage = `Usage: sdk-server restore ARCHIVE [--data-dir DIR] [--force]

Restores a backup (from sdk backup, GET /v1/admin/backup or DATA_DIR/backups/) into a data
directory: DIR, else DATA_DIR, else ./data. The archive's manifest and every file's SHA-256 are
checked before anything is written. The directory must be empty (backups/ aside) unless --force
is given: then its contents are replaced (backups/ is kept). Stop the server first: restore
refuses while a server uses the directory. A restore cut off midway (a crash, a power cut) is
finished by running it again; the server refuses to start until then.
With PostgreSQL the archive holds no database: restore that from your pg_dump.`;

/** `sdk-server restore …`: a one-shot command instead of the server. */
export async function restoreCommand(args: string[]): Promise<void> {
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
  const archive = parsed.positionals[0]!;
  try {
    const result = await restoreArchive(archive, dataDir, { force: parsed.values.force === true });
    const { manifest } = result;
    const lines = [
      ...(result.recovered === "finished"
        ? [`Finished a restore into ${result.dataDir} that had been cut off`]
        : result.recovered === "cleaned"
          ? [`Removed what a restore cut off before its swap left in ${result.dataDir}`]
          : []),
      `Restored ${archive} into ${result.dataDir}`,
      `  taken ${manifest.createdAt} by sdk-server ${manifest.serverVersion} (${manifest.dialect}); ${manifest.files.length} files verified`,
    ];
    if (result.replaced.length) lines.push(`  replaced: ${result.replaced.join(", ")}`);
    const ours = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")).version;
    const newer = (a: string, b: string) => {
      const [x, y] = [a, b].map((v) => v.split(/[.+-]/).map((part) => Number(part) || 0));
      for (let i = 0; i < 3; i++) if (x![i] !== y![i]) return x![i]! > y![i]!;
      return false;
    };
    if (newer(manifest.serverVersion, ours))
      lines.push(
        `  warning: the backup comes from sdk-server ${manifest.serverVersion}, newer than this one (${ours}): start it with ${manifest.serverVersion} or newer`,
      );
    if (manifest.dialect === "sqlite" && !manifest.files.some((f) => f.path === "secret.key"))
      lines.push(
        "  warning: the archive holds no secret.key: env var values and webhook secrets in the database cannot be read without the one it was used with; put it back into the data directory (the server refuses to start without it when the database holds such values)",
      );
    if (manifest.database === null)
      lines.push("  the database is PostgreSQL and not in the archive: restore it from your pg_dump");
    lines.push("Start the server on it (DATA_DIR) to use it.");
    process.stdout.write(`${lines.join("\n")}\n`);
  } catch (error) {
    if (error instanceof ArchiveError) {
      process.stderr.write(`sdk-server restore: ${archive}: ${error.message}; nothing was written\n`);
      process.exit(1);
    }
    const message = error instanceof Error ? error.message : String(error);
    // A refusal (RestoreError) or what the filesystem said (a permission, a full disk).
    process.stderr.write(
      `sdk-server restore: ${error instanceof RestoreError ? "" : "failed: "}${message}\n`,
    );
    process.exit(1);
  }
}
