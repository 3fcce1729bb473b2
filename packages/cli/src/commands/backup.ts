import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { BackupCheck } from "../backup-check.ts";
import type { Command } from "../command.ts";
import { connect } from "../context.ts";
import { CliError } from "../errors.ts";

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

export const backup: Command = {
  name: "backup",
  summary: "Download a backup of the whole server (admins)",
  usage: "sdk backup [--output FILE] [--json]",
  details:
    "Streams one archive (sdk-backup-<time>.tar.gz) of everything the server keeps: a consistent snapshot of the database taken while it runs, the key that encrypts env vars, deployed scripts and firmware, with a manifest of every file's SHA-256. It is written to FILE (default: the server's file name in the current directory) through a temp file, so FILE is only ever a whole archive. Restore it with: sdk-server restore FILE. The archive holds every account's credentials: keep it safe.",
  options: { output: { type: "string", short: "o" } },
  optionHelp: ["-o, --output FILE   where to write the archive (default: ./sdk-backup-<time>.tar.gz)"],
  json: true,
  async run({ values, g }) {
    const { client, host } = await connect(g);
    g.out.step(`Taking a backup of ${host}`);
    const download = await client.streamBackup();
    // The server's name is only a suggestion: a bare file name of the expected form, in this directory.
    const suggested = path.basename(download.filename);
    const name = /^sdk-backup-[0-9A-Za-z-]+\.tar\.gz$/.test(suggested) ? suggested : "sdk-backup.tar.gz";
    const file = path.resolve(typeof values.output === "string" ? values.output : name);
    const temp = `${file}.partial`;
    const hash = createHash("sha256");
    let written = 0;
    let shown = 0;
    const out = fs.createWriteStream(temp, { mode: 0o600 });
    const check = new BackupCheck();
    try {
      for await (const chunk of download.body) {
        hash.update(chunk);
        await check.write(chunk);
        written += chunk.length;
        if (!out.write(chunk)) await new Promise<void>((resolve) => out.once("drain", () => resolve()));
        if (written - shown >= 1024 * 1024) {
          shown = written;
          g.out.step(`Receiving the backup: ${mb(written)}`);
        }
      }
      await new Promise<void>((resolve, reject) =>
        out.end((error?: Error | null) => (error ? reject(error) : resolve())),
      );
      try {
        await check.finish(download.files);
      } catch (error) {
        throw new CliError(
          `The backup received is not whole: ${(error as Error).message}. Nothing was kept; try again.`,
        );
      }
      fs.renameSync(temp, file);
    } catch (error) {
      out.destroy();
      fs.rmSync(temp, { force: true });
      if (error instanceof Error && /terminated|aborted|ECONNRESET|socket/i.test(error.message))
        throw new CliError(
          `The backup stopped halfway (${mb(written)} received): ${error.message}. Nothing was kept; try again.`,
        );
      throw error;
    }
    g.out.stopSpinner();
    const sha256 = hash.digest("hex");
    const postgres = download.dialect === "postgres";
    g.out.result({
      file,
      bytes: written,
      sha256,
      files: download.files,
      dataBytes: download.bytes,
      dialect: download.dialect,
    });
    g.out.line(`Backup written to ${g.out.bold(file)}`);
    g.out.line(
      `  ${mb(written)} compressed (${download.files} files, ${mb(download.bytes)}), SHA-256 ${sha256}`,
    );
    if (postgres)
      g.out.line(
        g.out.yellow("  The database is PostgreSQL and is not in the archive: back it up with pg_dump."),
      );
    g.out.line(g.out.dim(`  Restore with: sdk-server restore ${path.basename(file)} --data-dir DIR`));
    return 0;
  },
};
