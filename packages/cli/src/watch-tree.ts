import fs from "node:fs";
import path from "node:path";

/** Directories never watched: build output, dependencies, version control. */
const ignoredDirs = new Set([".sdk", "node_modules", ".git"]);

/**
 * Names editors and tools write on the way to an atomic save (vim's 4913 probe and swap files,
 * emacs lock and autosave files, JetBrains safe-write files, `sed -i`'s temp file, *.tmp): the
 * rename onto the real name that follows is what counts.
 */
const scratchName = /^(4913|\.#.*|#.*#|sed[A-Za-z0-9]{6}|.*~|.*\.sw[a-p]|.*___jb_(tmp|old)___|.*\.tmp)$/;

export interface TreeWatch {
  close(): void;
}

/**
 * Calls `onChange` with the files (relative to `root`) that changed, once things have been quiet
 * for `debounceMs`. Every directory is watched on its own (new ones as they appear), never a
 * file: a file watch follows the inode, so it goes deaf after an editor saves by writing a new
 * file and renaming it over the old one, while a directory watch sees every such rename.
 */
export function watchTree(
  dir: string,
  onChange: (files: string[]) => void,
  options: { debounceMs?: number } = {},
): TreeWatch {
  const root = path.resolve(dir);
  const debounceMs = options.debounceMs ?? 150;
  const watchers = new Map<string, fs.FSWatcher>();
  const changed = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  let closed = false;

  const flush = () => {
    timer = undefined;
    if (closed || changed.size === 0) return;
    const files = [...changed].sort();
    changed.clear();
    onChange(files);
  };
  const note = (file: string) => {
    changed.add(path.relative(root, file));
    clearTimeout(timer);
    timer = setTimeout(flush, debounceMs);
  };
  const unwatch = (dir: string) => {
    for (const [watched, watcher] of watchers) {
      if (watched === dir || watched.startsWith(`${dir}${path.sep}`)) {
        watcher.close();
        watchers.delete(watched);
      }
    }
  };
  /** Watches `dir` and the directories under it; files found in a new one are changes. */
  const watchDir = (dir: string, isNew: boolean) => {
    if (closed || watchers.has(dir)) return;
    let watcher: fs.FSWatcher;
    try {
      watcher = fs.watch(dir, (_event, name) => {
        if (name) entry(dir, name.toString());
      });
    } catch {
      return; // gone already, or not readable
    }
    watcher.on("error", () => unwatch(dir));
    watchers.set(dir, watcher);
    let entries: fs.Dirent[] = [];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      unwatch(dir);
      return;
    }
    for (const e of entries) {
      if (e.isDirectory()) {
        if (!ignoredDirs.has(e.name)) watchDir(path.join(dir, e.name), isNew);
      } else if (isNew && !scratchName.test(e.name)) {
        note(path.join(dir, e.name));
      }
    }
  };
  const entry = (dir: string, name: string) => {
    if (ignoredDirs.has(name) || scratchName.test(name)) return;
    const full = path.join(dir, name);
    let isDir = false;
    try {
      isDir = fs.statSync(full).isDirectory();
    } catch {
      // removed, or renamed away
    }
    if (isDir) watchDir(full, true);
    else {
      unwatch(full);
      note(full);
    }
  };

  watchDir(root, false);
  return {
    close() {
      closed = true;
      clearTimeout(timer);
      for (const watcher of watchers.values()) watcher.close();
      watchers.clear();
    },
  };
}
