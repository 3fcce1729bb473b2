import fs from "node:fs";
import path from "node:path";

/**
 * How long (ms) the disk under `dir` takes to make a small write durable: the median of three
 * `fdatasync`s of a 4 KB write to a file of its own, removed afterwards. A commit with
 * `synchronous = FULL` waits about this long: ~0.1–0.5 ms on an SSD, several to tens of ms on an SD
 * card, a USB stick or a spinning disk. `null` when it cannot be measured (a full disk).
 */
export function diskSyncMs(dir: string): number | null {
  const file = path.join(dir, `.sync-probe-${process.pid}`);
  let fd: number;
  try {
    fd = fs.openSync(file, "w", 0o600);
  } catch {
    return null;
  }
  try {
    const block = Buffer.alloc(4096, 1);
    const times: number[] = [];
    for (let i = 0; i < 3; i++) {
      fs.writeSync(fd, block, 0, block.length, i * block.length);
      const started = performance.now();
      fs.fdatasyncSync(fd);
      times.push(performance.now() - started);
    }
    return times.sort((a, b) => a - b)[1]!;
  } catch {
    return null;
  } finally {
    fs.closeSync(fd);
    fs.rmSync(file, { force: true });
  }
}
