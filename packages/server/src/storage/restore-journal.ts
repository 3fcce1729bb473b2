import fs from "node:fs/promises";
import path from "node:path";
import { DataDirError } from "./data-dir.ts";
import { syncPath } from "./fsync.ts";

/**
 * Written (and flushed) once a restore's files are extracted and verified, before the first
 * rename of the swap; removed once the swap is done. While it exists, the data directory may hold
 * a mix of old and restored entries: the server refuses to start and `sdk-server restore` finishes
 * the swap. Without it, `.restoring-*` / `.replaced-*` dirs are leftovers of a restore cut off
 * before its swap began or after it ended: the data directory itself is whole.
 */
export const journalFileName = ".restore-journal";

export interface RestoreJournal {
  id: string;
  /** Entries of the data directory moved into `.replaced-<id>/`. */
  replaced: string[];
  /** Entries of `.restoring-<id>/` moved into the data directory. */
  incoming: string[];
}

export const stagingDir = (dir: string, id: string) => path.join(dir, `.restoring-${id}`);
export const asideDir = (dir: string, id: string) => path.join(dir, `.replaced-${id}`);

export async function writeJournal(dir: string, journal: RestoreJournal): Promise<void> {
  const file = path.join(dir, journalFileName);
  await fs.writeFile(`${file}.tmp`, `${JSON.stringify(journal)}\n`, { mode: 0o600, flush: true });
  await fs.rename(`${file}.tmp`, file);
  await syncPath(dir);
}

export async function removeJournal(dir: string): Promise<void> {
  await fs.rm(path.join(dir, journalFileName), { force: true });
  await syncPath(dir);
}

async function exists(file: string): Promise<boolean> {
  return fs.lstat(file).then(
    () => true,
    () => false,
  );
}

/** What a cut-off restore left in `dir` (the journal, staging and set-aside dirs); empty when none. */
async function restoreLeftovers(dir: string): Promise<string[]> {
  const names = await fs.readdir(dir).catch(() => [] as string[]);
  return names
    .filter(
      (n) => n === journalFileName || n === `${journalFileName}.tmp` || /^\.(restoring|replaced)-/.test(n),
    )
    .sort();
}

/**
 * Brings a data directory left by a cut-off restore to a whole state: with a journal the swap is
 * finished (the extracted files were complete and verified before it was written), without one the
 * leftovers are removed (the directory was never touched, or the swap had ended). Returns what it did.
 */
export async function finishInterruptedRestore(dir: string): Promise<"finished" | "cleaned" | null> {
  const leftovers = await restoreLeftovers(dir);
  if (!leftovers.length) return null;
  let journal: RestoreJournal | undefined;
  try {
    journal = JSON.parse(await fs.readFile(path.join(dir, journalFileName), "utf8")) as RestoreJournal;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  if (journal) {
    const staging = stagingDir(dir, journal.id);
    const aside = asideDir(dir, journal.id);
    await fs.mkdir(aside, { recursive: true, mode: 0o700 });
    // Every old entry went aside before the first restored one came in: the same order again.
    for (const name of journal.replaced)
      if (!(await exists(path.join(aside, name))) && (await exists(path.join(dir, name))))
        await fs.rename(path.join(dir, name), path.join(aside, name));
    for (const name of journal.incoming)
      if (await exists(path.join(staging, name)))
        await fs.rename(path.join(staging, name), path.join(dir, name));
    await syncPath(dir);
    await removeJournal(dir);
  }
  for (const name of leftovers)
    if (name !== journalFileName) await fs.rm(path.join(dir, name), { recursive: true, force: true });
  return journal ? "finished" : "cleaned";
}

/** Refuses to start a server on a data directory a cut-off restore left half swapped. */
export async function checkNoInterruptedRestore(dir: string): Promise<void> {
  const leftovers = await restoreLeftovers(dir);
  if (leftovers.length)
    throw new DataDirError(
      `DATA_DIR ${path.resolve(dir)} holds an interrupted restore (${leftovers.join(", ")}): run the same \`sdk-server restore ARCHIVE --data-dir ${path.resolve(dir)} --force\` again (it finishes the interrupted one first, then restores), then start the server`,
    );
}
