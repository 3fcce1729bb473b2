import fs from "node:fs";

/** Bytes an unprivileged process may still write on the filesystem holding `dir`; `null` if unknown. */
export async function freeBytes(dir: string): Promise<number | null> {
  try {
    const stats = await fs.promises.statfs(dir);
    return stats.bavail * stats.bsize;
  } catch {
    return null;
  }
}
