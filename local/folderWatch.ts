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
import { readdirSync, statSync, watch, type FSWatcher } from 'node:fs';
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
    let entries;
    try {
      entries = readdirSync(folder, { withFileTypes: true });
      watchers.set(folder, watch(folder, (_event, name) => name && changed(folder, name.toString())).on('error', () => drop(folder)));
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

function kindOf(path: string): 'folder' | 'file' | 'none' {
  try {
    return statSync(path).isDirectory() ? 'folder' : 'file';
  } catch {
    return 'none';
  }
}
