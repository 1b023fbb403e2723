/**
 * The package as its own piece, held by reading every import of the repository (type-only imports,
 * re-exports, dynamic imports and the scripts a sandbox is started with too): no import circle
 * among its source files; none of them imports a script (scripts/ are entry points), a test or a
 * test's support; none reaches, through any chain of imports, a file that imports the package (no
 * circle through the rest of the repository); and neither the product (functions/, lib/, infra/) nor
 * the local API (local/) imports it.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../../..');
const PACKAGE_SOURCE = 'tools/stage-emulator/src/';
const SKIPPED = new Set(['node_modules', 'dist', 'cdk.out', '.git', '.watch', '.inspect', '.data', 'coverage', 'reports']);
const SOURCE_FOLDERS = ['functions', 'lib', 'infra', 'local', 'scripts', 'tools', 'test', 'contract', 'client'];

function sourceFiles(folder: string): string[] {
  if (!existsSync(join(ROOT, folder))) return [];
  return readdirSync(join(ROOT, folder)).flatMap((name) => {
    const path = `${folder}/${name}`;
    if (SKIPPED.has(name)) return [];
    if (statSync(join(ROOT, path)).isDirectory()) return sourceFiles(path);
    return /\.(ts|mts|mjs)$/.test(name) && !name.endsWith('.d.ts') ? [path] : [];
  });
}

/** The repository files `file` imports, re-exports, imports dynamically or starts (`new URL('./x', import.meta.url)`). */
function importsOf(file: string): string[] {
  const code = readFileSync(join(ROOT, file), 'utf8').replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  const patterns = [
    /\b(?:import|export)\s+(?:type\s+)?(?:[\w$*{}\s,]+?\s+from\s+)?['"]([^'"]+)['"]/g,
    /\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/g,
    /\bnew URL\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*,\s*import\.meta\.url\s*\)/g,
  ];
  return patterns
    .flatMap((pattern) => [...code.matchAll(pattern)].map((match) => match[1]!))
    .filter((specifier) => specifier.startsWith('.'))
    .map((specifier) => relative(ROOT, resolve(ROOT, dirname(file), specifier)))
    .filter((target) => existsSync(join(ROOT, target)) && statSync(join(ROOT, target)).isFile());
}

const FILES = SOURCE_FOLDERS.flatMap(sourceFiles);
const GRAPH = new Map(FILES.map((file) => [file, importsOf(file)]));
const PACKAGE_FILES = FILES.filter((file) => file.startsWith(PACKAGE_SOURCE));
const inPackage = (file: string) => file.startsWith(PACKAGE_SOURCE);

/** Every import circle among `files` (each as `a -> b -> a`), by depth-first search. */
function circles(files: readonly string[]): string[] {
  const found: string[] = [];
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (file: string) => {
    state.set(file, 'open');
    path.push(file);
    for (const target of (GRAPH.get(file) ?? []).filter((next) => files.includes(next))) {
      if (state.get(target) === 'open') found.push([...path.slice(path.indexOf(target)), target].join(' -> '));
      else if (!state.has(target)) visit(target);
    }
    path.pop();
    state.set(file, 'done');
  };
  for (const file of files) if (!state.has(file)) visit(file);
  return found;
}

/** Every file reachable from `starts` through imports, with the chain that reaches it. */
function reachable(starts: readonly string[]): Map<string, string[]> {
  const chains = new Map<string, string[]>(starts.map((file) => [file, [file]]));
  const queue = [...starts];
  while (queue.length > 0) {
    const file = queue.shift()!;
    for (const target of GRAPH.get(file) ?? []) {
      if (chains.has(target)) continue;
      chains.set(target, [...chains.get(file)!, target]);
      queue.push(target);
    }
  }
  return chains;
}

describe('the stage emulator package', () => {
  it('reads its source files and their imports', () => {
    expect(PACKAGE_FILES.length).toBeGreaterThan(25);
    expect(GRAPH.get(`${PACKAGE_SOURCE}restApi.ts`)).toContain(`${PACKAGE_SOURCE}routing.ts`);
    expect(GRAPH.get(`${PACKAGE_SOURCE}sandbox.ts`)).toContain(`${PACKAGE_SOURCE}lambdaRuntime.mjs`);
  });

  it('has no import circle among its source files, type-only imports included', () => {
    expect(circles(PACKAGE_FILES)).toEqual([]);
  });

  it('imports no script, no test and no test support', () => {
    const wrong = PACKAGE_FILES.flatMap((file) =>
      (GRAPH.get(file) ?? []).filter((target) => /^(scripts|test)\//.test(target) || target.startsWith('tools/stage-emulator/test/')).map((target) => `${file} -> ${target}`),
    );
    expect(wrong).toEqual([]);
  });

  it('reaches none of its importers through any chain of imports', () => {
    const importers = FILES.filter((file) => !inPackage(file) && (GRAPH.get(file) ?? []).some(inPackage));
    expect(importers).toContain('scripts/startDeployed.ts');
    const chains = reachable(PACKAGE_FILES);
    const circular = importers.filter((file) => chains.has(file)).map((file) => chains.get(file)!.join(' -> '));
    expect(circular).toEqual([]);
  });

  it('is imported by neither the product (functions/, lib/, infra/) nor the local API (local/)', () => {
    const wrong = FILES.filter((file) => /^(functions|lib|infra|local)\//.test(file)).flatMap((file) =>
      (GRAPH.get(file) ?? []).filter(inPackage).map((target) => `${file} -> ${target}`),
    );
    expect(wrong).toEqual([]);
  });
});
