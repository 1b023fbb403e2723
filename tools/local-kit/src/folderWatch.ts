/**
 * Watches source folders for `npm run dev` and `start:deployed --watch`: one non-recursive
 * `fs.watch` per folder, never per file. Editors that save by writing a temporary file and renaming
 * it over the original (vim, JetBrains' safe write, `sed -i`) replace the file's inode; a folder's
 * watch sees the rename and every later write, where Node 22's recursive watch on Linux, which
 * follows files, loses the replaced one for good. New folders (a `git checkout`, `mkdir -p`) are
 * watched as they appear, and their files reported; a removed folder's watch is dropped.
 *
 * A maintained watcher library (chokidar) would serve as well; a folder's own watch is all this
 * needs, in fewer lines than the dependency would bring.
 */
import { existsSync, readdirSync, statSync, watch, type Dirent, type FSWatcher } from 'node:fs';
import { join } from 'node:path';

/** The files whose change matters: sources and their settings, not an editor's swap or backup files. */
const WATCHED_FILE = /^[^.~#][^~#]*\.(ts|mts|mjs|cjs|js|json)$/;

export interface FolderWatch {
  close(): void;
}

/** Calls `onChange` with the path of every watched file created, written, renamed, removed or chmod-ed below `roots`. */
export function watchFolders(roots: readonly string[], onChange: (file: string) => void): FolderWatch {
  const watchers = new Map<string, FSWatcher>();
  let closed = false;

  const add = (folder: string, reportFiles: boolean) => {
    if (closed || watchers.has(folder)) return;
    let entries: Dirent[];
    try {
      entries = readdirSync(folder, { withFileTypes: true });
      watchers.set(
        folder,
        watch(folder, (_event, name) => name && changed(folder, name.toString())).on('error', () => drop(folder)),
      );
    } catch {
      return; // gone before it could be watched; its parent's watch reports what replaces it
    }
    for (const entry of entries) {
      if (entry.isDirectory()) add(join(folder, entry.name), reportFiles);
      else if (reportFiles && WATCHED_FILE.test(entry.name)) onChange(join(folder, entry.name));
    }
  };

  const drop = (folder: string) => {
    for (const [path, watcher] of watchers) {
      if (path === folder || path.startsWith(`${folder}/`)) {
        watcher.close();
        watchers.delete(path);
      }
    }
  };

  const changed = (folder: string, name: string) => {
    const path = join(folder, name);
    const kind = kindOf(path);
    if (kind === 'folder') add(path, true);
    else if (kind === 'none' && watchers.has(path)) drop(path);
    if (kind !== 'folder' && WATCHED_FILE.test(name)) onChange(path);
  };

  for (const root of roots) add(root, false);
  return {
    close() {
      closed = true;
      for (const watcher of watchers.values()) watcher.close();
      watchers.clear();
    },
  };
}

/** A burst of changes is handled once no other change came for this long: one save is several events. */
const SETTLE_MS = 25;
/** How much longer a burst naming a missing file waits for it: a save by delete and create brings it back. */
const MISSING_GRACE_MS = 250;

export interface SettledWatch {
  /** Stops watching; settles once the burst being handled, if any, is done. */
  close(): Promise<void>;
}

/**
 * `watchFolders` with its changes grouped, for `npm run dev` and `start:deployed --watch`: `onBurst`
 * gets the files changed in a burst once it settles, one burst at a time, in order. A burst naming a
 * file that is missing waits up to MISSING_GRACE_MS for it to come back, as after an editor's delete
 * and create under load, rather than build without it; a file deleted for good is then handed on.
 */
export function watchSettled(roots: readonly string[], onBurst: (files: string[]) => Promise<void>): SettledWatch {
  let pending = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  let waitedMs = 0;
  let queue: Promise<void> = Promise.resolve();
  let closed = false;
  const settle = () => {
    if ([...pending].some((file) => !existsSync(file)) && waitedMs < MISSING_GRACE_MS) {
      waitedMs += SETTLE_MS;
      timer = setTimeout(settle, SETTLE_MS);
      return;
    }
    const files = [...pending];
    pending = new Set();
    waitedMs = 0;
    queue = queue.then(() => (closed ? undefined : onBurst(files)));
  };
  const watch = watchFolders(roots, (file) => {
    if (closed) return;
    pending.add(file);
    clearTimeout(timer);
    timer = setTimeout(settle, SETTLE_MS);
  });
  return {
    close: async () => {
      closed = true;
      clearTimeout(timer);
      watch.close();
      await queue;
    },
  };
}

function kindOf(path: string): 'folder' | 'file' | 'none' {
  try {
    return statSync(path).isDirectory() ? 'folder' : 'file';
  } catch {
    return 'none';
  }
}
