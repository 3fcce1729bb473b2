import fs from "node:fs";
import path from "node:path";

/** DATA_DIR cannot be created or written: the message says why and what to do, in one line. */
export class DataDirError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "DataDirError";
  }
}

/** A full disk or an exhausted quota passes by itself once space is freed: no reason to stop. */
const passing = new Set(["ENOSPC", "EDQUOT"]);

/**
 * Creates DATA_DIR (owner-only) when it is missing and proves the server can write in it, so a
 * read-only mount, a missing permission or a file in the way stops the server at startup with what
 * it is, not as the first failing write or `mkdir`'s misleading ENOENT. A full disk does not stop
 * it (a restart policy would make that a crash loop): the warning returned says so, and /ready
 * answers 503 until space is freed.
 */
export function prepareDataDir(dir: string): string | undefined {
  const absolute = path.resolve(dir);
  try {
    fs.mkdirSync(absolute, { recursive: true, mode: 0o700 });
  } catch (error) {
    const cause = rootCause(absolute, error as NodeJS.ErrnoException);
    // A directory cannot be made where its parent refuses it: name the parent.
    const at = cause.syscall === "mkdir" && cause.path ? path.dirname(cause.path) : cause.path;
    throw explain(absolute, cause, at);
  }
  const probe = path.join(absolute, `.write-check-${process.pid}`);
  try {
    fs.writeFileSync(probe, "sdk\n", { mode: 0o600 }); // bytes need space: a full disk shows
  } catch (error) {
    const cause = error as NodeJS.ErrnoException;
    const explained = explain(absolute, cause, absolute); // not the probe's name
    if (!cause.code || !passing.has(cause.code)) throw explained;
    fs.rmSync(probe, { force: true }); // the empty file a full disk may have left
    return `${explained.message} (starting anyway: /ready answers 503 until the database can write again)`;
  }
  fs.rmSync(probe, { force: true });
  return undefined;
}

/**
 * A recursive mkdir reports ENOENT, or the full path, when a parent cannot be made; the real
 * reason (read-only, permission, a file in the way) and place come from making the first missing
 * directory on its own.
 */
function rootCause(dir: string, error: NodeJS.ErrnoException): NodeJS.ErrnoException {
  let missing = dir;
  while (path.dirname(missing) !== missing && !exists(path.dirname(missing))) {
    missing = path.dirname(missing);
  }
  try {
    fs.mkdirSync(missing, { mode: 0o700 });
    fs.rmdirSync(missing);
    return error;
  } catch (cause) {
    return cause as NodeJS.ErrnoException;
  }
}

/** Whether something is at this path, a dangling symbolic link included. */
function exists(file: string): boolean {
  try {
    fs.lstatSync(file);
    return true;
  } catch {
    return false; // ENOENT, or ENOTDIR below a file
  }
}

/** The path itself or its nearest ancestor that exists (the file in the way of a directory). */
function existing(dir: string): string {
  let at = dir;
  while (!exists(at) && path.dirname(at) !== at) at = path.dirname(at);
  return at;
}

function explain(dir: string, error: NodeJS.ErrnoException, at = error.path): DataDirError {
  const where = at && path.resolve(at) !== dir ? ` (at ${at})` : "";
  const user = typeof process.getuid === "function" ? `user ${process.getuid()}` : "this user";
  const fix = "or set DATA_DIR to a directory the server can write";
  const reasons: Record<string, string> = {
    EROFS: `is on a read-only filesystem${where}: mount it read-write (a container volume without :ro), ${fix}`,
    EACCES: `is not writable by ${user}${where}: give it write permission (chown or chmod), ${fix}`,
    EPERM: `is not writable by ${user}${where}: give it write permission (chown or chmod), ${fix}`,
    ENOTDIR: `cannot be a directory: ${existing(dir)} is in the way and is not one; move it, ${fix}`,
    EEXIST: `cannot be a directory: ${existing(dir)} is in the way and is not one; move it, ${fix}`,
    ENOSPC: `is on a full filesystem${where}: free some space, ${fix}`,
    EDQUOT: `is over the disk quota of ${user}${where}: free some space, ${fix}`,
    ENOENT: `cannot be created: a part of its path${where} does not exist and cannot be made, perhaps a symbolic link to nothing: fix the path, ${fix}`,
    ELOOP: `cannot be reached: its path has a symbolic link loop${where}: fix the path, ${fix}`,
    ENAMETOOLONG: `is too long a path: use a shorter one, ${fix}`,
  };
  const reason = error.code && Object.hasOwn(reasons, error.code) ? reasons[error.code] : undefined;
  return new DataDirError(`DATA_DIR ${dir} ${reason ?? `cannot be used: ${error.message}; fix it, ${fix}`}`);
}
