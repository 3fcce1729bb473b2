import fs from "node:fs/promises";
import path from "node:path";

/** fsync of a file or a directory (for a directory: its entries, so renames in it survive a power cut). */
export async function syncPath(file: string): Promise<void> {
  const handle = await fs.open(file, "r");
  await handle.sync().finally(() => handle.close());
}

/** fsync of every file and directory under `dir`, and `dir` itself. */
export async function syncTree(dir: string): Promise<void> {
  for (const entry of await fs.readdir(dir, { withFileTypes: true })) {
    const at = path.join(dir, entry.name);
    if (entry.isDirectory()) await syncTree(at);
    else await syncPath(at);
  }
  await syncPath(dir);
}
