/**
 * The repository's own files, as the repository tests read them: every file below the root but
 * what npm, the builds and the runs write (node_modules, cdk.out, dist, .data and the like).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const ROOT = resolve(import.meta.dirname, '../..');

/** Folders no repository file lives in: installed packages and what builds and runs write. */
const NOT_OURS = new Set([
  'node_modules',
  'cdk.out',
  'dist',
  'coverage',
  'reports',
  'test-output',
  '.git',
  '.data',
  '.watch',
  '.inspect',
]);

/** Every repository file's path relative to the root, with `/` separators. */
export function repositoryFiles(): string[] {
  const found: string[] = [];
  const walk = (dir: string, prefix: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (NOT_OURS.has(entry.name) || entry.name.startsWith('.stryker-tmp')) continue;
      const path = prefix ? `${prefix}/${entry.name}` : entry.name;
      if (entry.isDirectory()) walk(join(dir, entry.name), path);
      else if (entry.isFile()) found.push(path);
    }
  };
  walk(ROOT, '');
  return found.sort();
}

export const read = (path: string): string => readFileSync(join(ROOT, path), 'utf8');
