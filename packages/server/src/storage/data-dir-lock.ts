import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { DataDirError } from "./data-dir.ts";

/** Held in DATA_DIR by the server (and by a restore) while it uses the directory. */
export const lockFileName = ".lock";

interface LockOwner {
  pid: number;
  hostname: string;
  command: string;
}

export interface DataDirLock {
  release(): void;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"; // exists, another user's
  }
}

function readOwner(file: string): LockOwner | null {
  try {
    const owner = JSON.parse(fs.readFileSync(file, "utf8")) as LockOwner;
    return Number.isSafeInteger(owner?.pid) ? owner : null;
  } catch {
    return null; // gone meanwhile, or half-written by a process killed while writing it
  }
}

/**
 * Takes DATA_DIR/.lock (created with O_EXCL, holding the PID and host name). Node has no flock, so
 * a lock left by a process that died is recognised by its PID: on this host and not running, or
 * this very process (a container restarted under the same PID), it is stale and taken over.
 * `strict` (restore) also refuses a lock written on another host (another container on the same
 * volume), whose PID cannot be checked; the server takes those over, or a recreated container
 * would never start again.
 */
export function acquireDataDirLock(
  dir: string,
  command: "server" | "restore",
  options: { strict?: boolean } = {},
): DataDirLock {
  const file = path.join(path.resolve(dir), lockFileName);
  const me: LockOwner = { pid: process.pid, hostname: os.hostname(), command };
  for (let attempt = 0; ; attempt++) {
    try {
      fs.writeFileSync(file, `${JSON.stringify(me)}\n`, { mode: 0o600, flag: "wx" });
      break;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // A full disk has no block for the lock: the server still starts (prepareDataDir warns), unlocked.
      if (code === "ENOSPC" || code === "EDQUOT") {
        fs.rmSync(file, { force: true });
        return { release() {} };
      }
      if (code !== "EEXIST" || attempt > 2) throw error;
    }
    const owner = readOwner(file);
    if (owner) {
      const sameHost = owner.hostname === me.hostname;
      const held = sameHost ? owner.pid !== process.pid && alive(owner.pid) : options.strict === true;
      if (held) {
        const who = owner.command === "restore" ? "a restore" : "an sdk-server";
        throw new DataDirError(
          `DATA_DIR ${path.dirname(file)} is in use by ${who} (PID ${owner.pid} on ${owner.hostname}): stop it first; if none is running, remove ${file}`,
        );
      }
    }
    fs.rmSync(file, { force: true }); // stale: its process is gone
  }
  let released = false;
  return {
    release() {
      if (released) return;
      released = true;
      if (readOwner(file)?.pid === process.pid) fs.rmSync(file, { force: true });
    },
  };
}
